/**
 * How observed ACP content is shown: content blocks as ContentView, wire text as plain text, and
 * the tap's stand-ins for large content as what they are — a digest and a size, never a guess
 * at what was omitted. Blocks are judged one schema at a time, so a block whose shape is broken
 * is still shown (as `other`) rather than dropped.
 */
import {
  AudioContentSchema,
  EmbeddedResourceSchema,
  ImageContentSchema,
  ResourceLinkSchema,
  TextContentSchema,
  isStandIn,
  type StandIn,
  type WireText,
} from './acp-content';
import type { ContentView } from './session-view';

/** The text shown in place of omitted content inside a text or diff field. */
export function standInText(s: StandIn): string {
  return `[${s.$size} bytes omitted, sha256 ${s.$digest.slice(0, 12)}]`;
}

/** Wire text as shown, and whether it was cut (replaced by a stand-in). */
export function wireText(v: WireText): { text: string; truncated: boolean } {
  return typeof v === 'string' ? { text: v, truncated: false } : { text: standInText(v), truncated: true };
}

function omitted(v: unknown): { digest: string; size: number } | Record<string, never> {
  return isStandIn(v) ? { digest: v.$digest, size: v.$size } : {};
}

/** One content block as shown. Never throws: whatever does not parse is `other`. */
export function contentViewOf(block: unknown): ContentView {
  const text = TextContentSchema.safeParse(block);
  if (text.success) {
    const t = text.data.text;
    return typeof t === 'string' ? { type: 'text', text: t } : { type: 'other', label: `${t.$size} bytes omitted`, digest: t.$digest, size: t.$size };
  }
  const image = ImageContentSchema.safeParse(block);
  if (image.success) return { type: 'image', label: `image ${image.data.mimeType}`, ...omitted(image.data.data) };
  const audio = AudioContentSchema.safeParse(block);
  if (audio.success) return { type: 'audio', label: `audio ${audio.data.mimeType}`, ...omitted(audio.data.data) };
  const link = ResourceLinkSchema.safeParse(block);
  if (link.success) return { type: 'resource_link', label: `${link.data.name} (${link.data.uri})` };
  const resource = EmbeddedResourceSchema.safeParse(block);
  if (resource.success) {
    const r = resource.data.resource;
    return { type: 'resource', label: r.uri, ...omitted('text' in r ? r.text : r.blob) };
  }
  if (isStandIn(block)) return { type: 'other', label: `${block.$size} bytes omitted`, digest: block.$digest, size: block.$size };
  const type = typeof block === 'object' && block !== null && 'type' in block && typeof block.type === 'string' ? block.type : 'unknown';
  return { type: 'other', label: `${type} block` };
}

/** A block as text inside a merged message or thought: its text, or its label in brackets. */
export function textOfBlock(block: unknown): string {
  const text = TextContentSchema.safeParse(block);
  if (text.success) return wireText(text.data.text).text;
  const view = contentViewOf(block);
  return view.type === 'text' ? view.text : `[${view.label}]`;
}
