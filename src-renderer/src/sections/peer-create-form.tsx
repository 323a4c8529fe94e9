/**
 * Creating a peer: id, name, port, public IP, how callers authenticate, a shared secret, LLM
 * mode. Each field is checked as it is submitted (the same rules the plane applies, and the
 * contract's own request schema last), errors sit beside their field, and whatever the plane
 * still refuses is shown at the form.
 */
import { useId, useRef, useState, type FormEvent } from 'react';
import { commands, type CommandRequest } from '../../../src-shared/ipc/contract';
import { describeZodError } from '../../../src-shared/ipc/errors';
import { PeerIdSchema } from '../../../src-shared/vocabulary/ids';
import type { PeerAuthMode } from '../../../src-shared/vocabulary/peers';
import { NEXT_FREE_PORT, peerErrorText } from '../lib/peer-errors';
import { useApp } from '../store/store-context';

type Errors = Partial<Record<'id' | 'name' | 'port' | 'publicIp' | 'secret' | 'form', string>>;

export function validatePeerForm(values: { id: string; name: string; port: string; publicIp: string; auth: PeerAuthMode; secret: string }): Errors {
  const errors: Errors = {};
  if (!values.id) errors.id = 'An id is required.';
  else if (!PeerIdSchema.safeParse(values.id).success) errors.id = 'Lowercase letters, digits and dashes, starting with a letter (at most 40).';
  if (values.name.length > 80) errors.name = 'At most 80 characters.';
  if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) errors.port = 'A port from 0 to 65535 (0 picks a free one at each start).';
  if (!values.publicIp.trim()) errors.publicIp = 'The address others are told to call, e.g. 127.0.0.1.';
  else if (/\s|\//.test(values.publicIp.trim())) errors.publicIp = 'An IP address or host name only, without scheme, port or path.';
  if (values.auth !== 'identity' && values.secret && (values.secret.length < 8 || values.secret.length > 512)) {
    errors.secret = 'At least 8 and at most 512 characters (or leave it empty to generate one).';
  }
  return errors;
}

export function PeerCreateForm({ onClose }: { onClose(created?: string): void }) {
  const createPeer = useApp((s) => s.createPeer);
  const peerAction = useApp((s) => s.peerAction);
  const formId = useId();
  const [values, setValues] = useState({ id: '', name: '', port: '0', publicIp: '127.0.0.1', auth: 'both' as PeerAuthMode, secret: '', llmMode: false, portFallback: false, startNow: false });
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const refs = useRef<Record<string, HTMLInputElement | null>>({});

  const field = (name: keyof Errors) => ({
    id: `${formId}-${name}`,
    'aria-invalid': errors[name] ? true : undefined,
    'aria-describedby': errors[name] ? `${formId}-${name}-error` : `${formId}-${name}-hint`,
    ref: (el: HTMLInputElement | null) => {
      refs.current[name] = el;
    },
  });
  const errorText = (name: keyof Errors) =>
    errors[name] ? (
      <span className="field-error" id={`${formId}-${name}-error`}>
        {errors[name]}
      </span>
    ) : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = validatePeerForm(values);
    const request: CommandRequest<'peers.create'> = {
      id: values.id,
      ...(values.name.trim() ? { name: values.name.trim() } : {}),
      port: Number(values.port),
      publicIp: values.publicIp.trim(),
      auth: values.auth,
      llmMode: values.llmMode,
      ...(values.portFallback ? { portFallback: true } : {}),
      ...(values.auth !== 'identity' && values.secret ? { secret: values.secret } : {}),
    };
    if (Object.keys(found).length === 0) {
      const parsed = commands['peers.create'].request.safeParse(request);
      if (!parsed.success) found.form = describeZodError(parsed.error);
    }
    setErrors(found);
    const first = (['id', 'name', 'port', 'publicIp', 'secret'] as const).find((k) => found[k]);
    if (first) {
      refs.current[first]?.focus();
      return;
    }
    if (found.form) return;
    setBusy(true);
    const result = await createPeer(request);
    setBusy(false);
    if (!result.ok) {
      // The plane names the field when it can ("id: …"); put it there, else on the form.
      const message = result.error.message;
      if (result.error.code === 'AP_PORT_IN_USE') {
        setErrors({ port: peerErrorText(result.error) });
        refs.current.port?.focus();
      } else if (/^id\b|already exists/.test(message)) setErrors({ id: message });
      else setErrors({ form: message });
      return;
    }
    onClose(result.value.id);
    if (values.startNow) void peerAction(result.value.id, 'start');
  };

  const set = (patch: Partial<typeof values>) => setValues((v) => ({ ...v, ...patch }));

  return (
    <form className="panel form-grid" aria-labelledby={`${formId}-title`} onSubmit={submit} noValidate>
      <h2 id={`${formId}-title`}>Create a peer</h2>
      <div className="field">
        <label htmlFor={`${formId}-id`}>Peer id</label>
        <input {...field('id')} value={values.id} autoComplete="off" spellCheck={false} onChange={(e) => set({ id: e.target.value })} autoFocus />
        <span className="field-hint" id={`${formId}-id-hint`}>
          Lowercase, e.g. <code>gamma</code>. Its address and identity key are named by it.
        </span>
        {errorText('id')}
      </div>
      <div className="field">
        <label htmlFor={`${formId}-name`}>Display name (optional)</label>
        <input {...field('name')} value={values.name} onChange={(e) => set({ name: e.target.value })} />
        <span className="field-hint" id={`${formId}-name-hint`}>
          Shown in lists; the id when empty.
        </span>
        {errorText('name')}
      </div>
      <div className="field">
        <label htmlFor={`${formId}-port`}>Port</label>
        <input {...field('port')} inputMode="numeric" value={values.port} onChange={(e) => set({ port: e.target.value.trim() })} />
        <span className="field-hint" id={`${formId}-port-hint`}>
          0 picks a free port at each start.
        </span>
        {errorText('port')}
      </div>
      <div className="field">
        <label htmlFor={`${formId}-publicIp`}>Public IP</label>
        <input {...field('publicIp')} value={values.publicIp} spellCheck={false} onChange={(e) => set({ publicIp: e.target.value })} />
        <span className="field-hint" id={`${formId}-publicIp-hint`}>
          The address it binds and advertises; it must be local to this machine.
        </span>
        {errorText('publicIp')}
      </div>
      <fieldset className="field field-wide">
        <legend>Callers authenticate with</legend>
        <div className="radio-row">
          {(
            [
              ['both', 'Identity or shared secret'],
              ['identity', 'Peer identity only'],
              ['shared-secret', 'Shared secret only'],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="choice">
              <input type="radio" name={`${formId}-auth`} value={value} checked={values.auth === value} onChange={() => set({ auth: value })} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      {values.auth !== 'identity' ? (
        <div className="field">
          <label htmlFor={`${formId}-secret`}>Shared secret (optional)</label>
          <input {...field('secret')} type="password" autoComplete="new-password" value={values.secret} onChange={(e) => set({ secret: e.target.value })} />
          <span className="field-hint" id={`${formId}-secret-hint`}>
            At least 8 characters; a strong one is generated when empty. It is stored in the peer's folder, never in the journal.
          </span>
          {errorText('secret')}
        </div>
      ) : null}
      <div className="field field-checks">
        <label className="choice">
          <input type="checkbox" checked={values.llmMode} onChange={(e) => set({ llmMode: e.target.checked })} />
          LLM mode (conversations keep context)
        </label>
        <label className="choice">
          <input type="checkbox" checked={values.portFallback} onChange={(e) => set({ portFallback: e.target.checked })} />
          {NEXT_FREE_PORT[0]!.toUpperCase() + NEXT_FREE_PORT.slice(1)} when this one is busy
        </label>
        <label className="choice">
          <input type="checkbox" checked={values.startNow} onChange={(e) => set({ startNow: e.target.checked })} />
          Start it after creating
        </label>
      </div>
      {errors.form ? (
        <p className="form-error field-wide" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create peer'}
        </button>
        <button type="button" className="button" onClick={() => onClose()}>
          Cancel
        </button>
      </div>
    </form>
  );
}
