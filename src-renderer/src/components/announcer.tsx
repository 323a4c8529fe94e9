/** The polite live region every action reports to ("Peer alpha started."), and a visible toast. */
import { useEffect, useState } from 'react';
import { useApp } from '../store/store-context';

export function Announcer() {
  const announcement = useApp((s) => s.announcement);
  const [visible, setVisible] = useState(false);
  useEffect(() => {
    if (!announcement.text) return;
    setVisible(true);
    const timer = window.setTimeout(() => setVisible(false), 4000);
    // Escape dismisses the toast (the announcement has already been read out).
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setVisible(false);
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.clearTimeout(timer);
      window.removeEventListener('keydown', onKey);
    };
  }, [announcement]);
  return (
    <div className={`toast${visible ? ' toast-visible' : ''}`} role="status" aria-live="polite" aria-label="Notifications">
      {visible ? announcement.text : ''}
    </div>
  );
}
