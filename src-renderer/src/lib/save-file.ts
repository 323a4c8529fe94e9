/**
 * Hands text to the person as a file: a Blob, an object URL and an `<a download>` click, which
 * works the same in a browser tab and in the Electron window (no Node file access needed).
 */
export function saveTextFile(fileName: string, content: string, type = 'application/x-ndjson'): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // The click has started the download synchronously; the URL can go once the event loop turns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
