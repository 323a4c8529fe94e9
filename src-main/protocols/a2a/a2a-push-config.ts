/**
 * The push notification config methods (Create/Get/List/DeleteTaskPushNotificationConfig), and
 * the config a SendMessage may carry. Served when the endpoint supplies `push` (durable
 * config/cursor storage, push-store.ts, and netguard as the transport; a2a-push.ts delivers);
 * without it every push method answers -32003. A push config is the caller's like its task:
 * every push method names a task through readOwn first, so another caller's task answers
 * TaskNotFound here as everywhere.
 */
import type { RunView } from '../../../src-shared/ipc/contract';
import { MAX_PUSH_CONFIGS_PER_TASK, type PushStore, type StoredPushConfig } from './push-store';
import { A2A_ERRORS, RpcError, type Json } from './a2a-wire';

export interface A2aPushOptions {
  store: PushStore;
  /**
   * Why a receiver URL may not be used, or null when it may (a2a-endpoint.ts: https, or an
   * origin on the outbound allow list, and netguard's pre-flight).
   */
  refuseTarget(url: string): string | null;
  /** A config was set: look at its task now. */
  poke(taskId: string): void;
  /** Why the task, as it stands, may not be pushed to `url` (a value above the receiver's sensitivity ceiling), or null. */
  refuseFor?(taskId: string, principal: string, url: string): Promise<string | null>;
}

export interface PushConfigMethods {
  /** A config's fields, checked: a bad one names itself (prefix: where it sat in the request). */
  check(input: Json, prefix?: string): void;
  /** Stores a checked config for the task and looks at the task now. */
  put(taskId: string, input: Json): Json;
  create(params: Json): Promise<Json>;
  get(params: Json): Promise<Json>;
  list(params: Json): Promise<Json>;
  delete(params: Json): Promise<Json>;
}

/**
 * The push methods of one endpoint, for `principal`. `readOwn` is the endpoint's own: the task
 * named, when it is the caller's, or TaskNotFound.
 */
export function createPushConfigMethods(served: A2aPushOptions | undefined, principal: string, readOwn: (taskId: unknown) => Promise<RunView>): PushConfigMethods {
  function pushOrRefuse(): A2aPushOptions {
    if (!served) throw new RpcError(A2A_ERRORS.pushNotSupported, 'push notifications are not served by this endpoint');
    return served;
  }

  /** A config's fields, checked: a bad one names itself (prefix: where it sat in the request). */
  function checkPushConfig(input: Json, prefix = ''): void {
    const push = pushOrRefuse();
    if (typeof input !== 'object' || input === null) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix || 'params'} must be a push notification config`, { field: prefix || 'params' });
    if (typeof input.url !== 'string' || input.url.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}url is required`, { field: `${prefix}url` });
    const refused = push.refuseTarget(input.url);
    if (refused) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}url: ${refused}`, { field: `${prefix}url` });
    if (input.token !== undefined && (typeof input.token !== 'string' || input.token.length > 4096)) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}token must be a string of at most 4096 characters`, { field: `${prefix}token` });
    if (input.id !== undefined && (typeof input.id !== 'string' || input.id.length > 200)) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}id must be a string of at most 200 characters`, { field: `${prefix}id` });
    const auth = input.authentication as Json | undefined;
    if (auth !== undefined && (typeof auth !== 'object' || auth === null || typeof auth.scheme !== 'string' || !/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,99}$/.test(auth.scheme) || typeof auth.credentials !== 'string' || /[\r\n]/.test(auth.credentials))) {
      throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}authentication needs an HTTP auth scheme name and credentials on one line`, { field: `${prefix}authentication` });
    }
  }

  function putPushConfig(taskId: string, input: Json): Json {
    const push = pushOrRefuse();
    const auth = input.authentication as { scheme: string; credentials: string } | undefined;
    let stored: StoredPushConfig;
    try {
      stored = push.store.put({
        taskId,
        owner: principal,
        url: input.url as string,
        ...(typeof input.id === 'string' && input.id !== '' ? { id: input.id } : {}),
        ...(typeof input.token === 'string' && input.token !== '' ? { token: input.token } : {}),
        ...(auth ? { authentication: { scheme: auth.scheme, credentials: auth.credentials } } : {}),
      });
    } catch (error) {
      if (error instanceof RangeError) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${error.message}`, { field: 'id', limit: MAX_PUSH_CONFIGS_PER_TASK });
      throw error;
    }
    push.poke(taskId);
    return pushConfigView(stored);
  }

  /** A config as answered: the caller's own token back, the credentials never (only their scheme). */
  function pushConfigView(config: StoredPushConfig): Json {
    return {
      id: config.id,
      taskId: config.taskId,
      url: config.url,
      ...(config.token ? { token: config.token } : {}),
      ...(config.authentication ? { authentication: { scheme: config.authentication.scheme } } : {}),
    };
  }

  function ownPushConfig(taskId: string, id: unknown): StoredPushConfig {
    if (typeof id !== 'string' || id.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: id must name a push notification config', { field: 'id' });
    const config = pushOrRefuse().store.get(taskId, id);
    if (!config) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: task ${taskId} has no push notification config ${id}`, { field: 'id' });
    return config;
  }

  return {
    check: checkPushConfig,
    put: putPushConfig,
    async create(params) {
      const push = pushOrRefuse();
      const run = await readOwn(params.taskId);
      checkPushConfig(params);
      // A task already holding a value above the receiver's ceiling is refused now, not withheld silently later.
      const refused = await push.refuseFor?.(run.runId, principal, params.url as string);
      if (refused) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: url: ${refused}`, { field: 'url' });
      return putPushConfig(run.runId, params);
    },
    async get(params) {
      pushOrRefuse();
      const run = await readOwn(params.taskId);
      return pushConfigView(ownPushConfig(run.runId, params.id));
    },
    async list(params) {
      const push = pushOrRefuse();
      const run = await readOwn(params.taskId);
      // At most MAX_PUSH_CONFIGS_PER_TASK per task: one page always holds them all.
      return { configs: push.store.forTask(run.runId).map(pushConfigView), nextPageToken: '' };
    },
    async delete(params) {
      const push = pushOrRefuse();
      const run = await readOwn(params.taskId);
      if (typeof params.id !== 'string' || params.id.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: id must name a push notification config', { field: 'id' });
      // Idempotent, as the spec's DeleteTaskPushNotificationConfig must be: a config already gone
      // (or never there) answers exactly as the delete that removed it did. The task is still
      // the caller's own (readOwn), so this tells nobody anything about another caller's tasks.
      push.store.delete(run.runId, params.id);
      return {};
    },
  };
}
