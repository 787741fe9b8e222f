// How long the page was hidden during my own turn: sent with the move it
// ends (`hidden_ms`), for the fair-play sentinel. A player who hides the
// page to consult an engine on their turn looks different from one who
// looks away on the opponent's; the server never acts on it alone.

export function turnFocus() {
  let myTurn = false;
  let hiddenMs = 0;
  let hiddenSince = null;

  const now = () => performance.now();
  const onVisibility = () => {
    if (!myTurn) return;
    if (document.hidden && hiddenSince === null) hiddenSince = now();
    else if (!document.hidden && hiddenSince !== null) {
      hiddenMs += now() - hiddenSince;
      hiddenSince = null;
    }
  };
  document.addEventListener('visibilitychange', onVisibility);

  return {
    // Called on every render: a turn of mine begins or ends.
    update(isMine) {
      if (isMine === myTurn) return;
      myTurn = isMine;
      if (isMine) {
        hiddenMs = 0;
        hiddenSince = document.hidden ? now() : null;
      } else if (hiddenSince !== null) {
        hiddenMs += now() - hiddenSince;
        hiddenSince = null;
      }
    },
    // The hidden time of the turn a move ends, in whole milliseconds.
    take() {
      const total = hiddenMs + (hiddenSince === null ? 0 : now() - hiddenSince);
      hiddenMs = 0;
      hiddenSince = document.hidden ? now() : null;
      return Math.max(0, Math.round(total));
    },
    stop() { document.removeEventListener('visibilitychange', onVisibility); },
  };
}
