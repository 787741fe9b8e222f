// /tournaments: the scheduled arenas on now and next, and (for a
// registered player) a private arena made here, its code to pass on.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, get, post } from '../api.js';
import { VARIANTS, clock, errorMessage, timeControlLabel, variantName } from '../format.js';
import { navigate } from '../router.js';
import { toastError } from '../ui.js';

const CLOCKS = [[60, 0], [180, 2], [300, 3], [600, 5]];

export function tournamentLine(tournament) {
  const when = tournament.status === 'running'
    ? t('tournament_ends_in', { time: clock(tournament.seconds_left * 1000) })
    : t('tournament_starts_in', { time: clock(tournament.seconds_left * 1000) });
  return h('a', { class: 'game-row', href: `/tournament/${tournament.id}`, 'data-testid': 'tournament-row' },
    h('span', { class: 'game-row-variant' },
      h('strong', { text: tournament.name }),
      h('span', { class: 'muted', text: ` · ${variantName(tournament.variant)} ${timeControlLabel(tournament.time_control)} · ${tournament.rated ? t('rated') : t('casual')}` })),
    h('span', { class: 'game-row-meta' },
      h('span', { class: `pill ${tournament.status === 'running' ? 'live' : ''}`, text: when }),
      h('span', { class: 'muted', text: t('tournament_players', { n: tournament.players }) })));
}

export function mount(root) {
  let list = null;
  let error = null;
  let destroyed = false;

  async function load() {
    try {
      list = await get('/v1/tournaments');
      error = null;
    } catch (e) {
      error = e;
    }
    if (!destroyed) draw();
  }

  function createForm() {
    const me = currentPlayer();
    if (!me || me.guest) return h('p', { class: 'muted', text: t('tournament_register_to_make') });
    const name = h('input', { type: 'text', maxlength: 60, required: true, 'data-testid': 'tournament-name', value: t('tournament_default_name', { name: me.display_name }) });
    const variant = h('select', { 'data-testid': 'tournament-variant' }, VARIANTS.map((v) => h('option', { value: v, text: variantName(v) })));
    const clock = h('select', { 'data-testid': 'tournament-clock' }, CLOCKS.map(([initial, increment], i) => h('option', {
      value: String(i), text: timeControlLabel({ initial_secs: initial, increment_secs: increment }), selected: i === 1,
    })));
    const minutes = h('select', { 'data-testid': 'tournament-minutes' }, [20, 30, 45, 60].map((m) => h('option', { value: String(m), text: t('n_minutes', { n: m }), selected: m === 30 })));
    const starts = h('select', { 'data-testid': 'tournament-starts' }, [0, 5, 15, 60].map((m) => h('option', { value: String(m), text: m ? t('in_n_minutes', { n: m }) : t('at_once') })));
    const rated = h('input', { type: 'checkbox', 'data-testid': 'tournament-rated' });
    const field = (label, control) => h('label', { class: 'field' }, h('span', { class: 'field-label', text: label }), control);
    return h('form', {
      class: 'fields tournament-form', 'data-testid': 'tournament-form',
      onsubmit: async (event) => {
        event.preventDefault();
        const [initial, increment] = CLOCKS[Number(clock.value)];
        try {
          const made = await post('/v1/tournaments', {
            name: name.value, variant: variant.value,
            time_control: { initial_secs: initial, increment_secs: increment },
            minutes: Number(minutes.value), starts_in_secs: Number(starts.value) * 60, rated: rated.checked,
          });
          navigate(`/tournament/${made.id}?code=${made.code}`);
        } catch (e) { toastError(e); }
      },
    },
    field(t('tournament_name'), name), field(t('variant'), variant), field(t('time_control'), clock),
    field(t('tournament_length'), minutes), field(t('tournament_start'), starts),
    h('label', { class: 'check' }, rated, h('span', { text: t('rated_game') })),
    h('button', { type: 'submit', class: 'button accent', 'data-testid': 'tournament-create', text: t('tournament_create') }));
  }

  function section(title, items, testid) {
    return h('section', {},
      h('h2', { text: title }),
      items.length ? h('div', { class: 'game-list', 'data-testid': testid }, items.map(tournamentLine)) : h('p', { class: 'muted', text: t('tournament_none') }));
  }

  function draw() {
    let body;
    if (error) body = [h('p', { class: 'error-text', text: errorMessage(error) })];
    else if (!list) body = [h('p', { class: 'muted', text: t('loading') })];
    else body = [section(t('tournaments_running'), list.running, 'tournaments-running'), section(t('tournaments_upcoming'), list.upcoming, 'tournaments-upcoming')];
    document.title = `${t('tournaments_title')} · Mancala Arena`;
    root.replaceChildren(h('section', { class: 'card page-card', 'data-testid': 'tournaments' },
      h('h1', { class: 'page-title', text: t('tournaments_title') }),
      ...body,
      h('h2', { text: t('tournament_private') }),
      createForm()));
  }

  draw();
  load();
  const timer = setInterval(load, 10_000);
  return { relabel: draw, destroy() { destroyed = true; clearInterval(timer); } };
}
