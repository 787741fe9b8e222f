// /mod/player/{id}: an account's file (sanctions, notes, reports, the
// fair-play record, accounts on the same network, frequent opponents,
// ratings with their history, recent games) and the actions on it, each
// with its reason. A mark's recompute is followed until it is done.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { api, post } from '../api.js';
import { number, variantName } from '../format.js';
import { toast, toastError } from '../ui.js';
import { evidenceView, failure, field, isAdmin, modPage, playerLink, reasonInput, reporterLink, when } from './mod-common.js';

const ACTIONS = ['warn', 'ban_ranked', 'rename', 'mark', 'close', 'reopen', 'set_role'];
const REPORT_REASONS = ['engine', 'boosting', 'stalling', 'offensive_name'];

export function mount(root, { id }) {
  let file = null;
  let error = null;
  let destroyed = false;
  let recompute = null;

  async function load() {
    try {
      file = await api('GET', `/v1/mod/players/${encodeURIComponent(id)}`);
      error = null;
    } catch (e) {
      error = e;
    }
    if (!destroyed) draw();
  }

  async function follow(recomputeId) {
    recompute = { id: recomputeId, done: false };
    draw();
    for (let tries = 0; tries < 120 && !destroyed; tries += 1) {
      try {
        recompute = await api('GET', `/v1/mod/recomputes/${recomputeId}`);
        if (recompute.done) break;
      } catch { /* asked again */ }
      await new Promise((resolve) => { setTimeout(resolve, 500); });
    }
    if (!destroyed) load();
  }

  async function done(answer, message) {
    toast(message);
    if (answer?.recompute) follow(answer.recompute);
    else load();
  }

  function actionForm() {
    const kinds = ACTIONS.filter((kind) => kind !== 'set_role' || isAdmin());
    const kind = h('select', { 'data-testid': 'mod-action' }, kinds.map((k) => h('option', { value: k, text: t(`mod_action_${k}`) })));
    const hours = h('input', { type: 'number', min: 1, max: 8760, value: 24, 'data-testid': 'mod-hours' });
    const name = h('input', { type: 'text', maxlength: 20, 'data-testid': 'mod-new-name' });
    const mark = h('select', { 'data-testid': 'mod-mark' }, ['booster', 'engine'].map((m) => h('option', { value: m, text: t(`mod_mark_${m}`) })));
    const since = h('input', { type: 'date', 'data-testid': 'mod-mark-since' });
    const role = h('select', { 'data-testid': 'mod-role' }, ['player', 'moderator', 'admin'].map((r) => h('option', { value: r, text: t(`role_${r}`) })));
    const reason = reasonInput('mod-reason');
    // A warning or a ban answers (and closes) the open reports of the
    // reason it is about, and no others; the reasons with an open report
    // come first.
    const openReasons = [...new Set(file.reports.filter((r) => !r.closed_at).map((r) => r.reason))];
    const about = h('select', { 'data-testid': 'mod-about' },
      h('option', { value: '', text: t('mod_about_none') }),
      REPORT_REASONS.map((r) => h('option', { value: r, selected: r === openReasons[0], text: t(`report_reason_${r}`) })));
    // Made when shown: a warning and a ban share the `about` select.
    const extras = {
      warn: () => field(t('mod_about'), about),
      ban_ranked: () => h('div', { class: 'fields' }, field(t('mod_hours'), hours), field(t('mod_about'), about)),
      rename: () => field(t('mod_new_name'), name),
      mark: () => h('div', { class: 'fields' }, field(t('mod_mark'), mark), field(t('mod_mark_since'), since)),
      set_role: () => field(t('mod_role'), role),
    };
    const extraBox = h('div', { class: 'mod-extra' });
    const showExtra = () => extraBox.replaceChildren(extras[kind.value]?.() ?? '');
    kind.addEventListener('change', showExtra);
    showExtra();
    return h('form', {
      class: 'mod-actions', 'data-testid': 'mod-actions',
      onsubmit: async (event) => {
        event.preventDefault();
        const body = { action: kind.value, reason: reason.value };
        if (kind.value === 'ban_ranked') body.hours = Number(hours.value);
        if ((kind.value === 'warn' || kind.value === 'ban_ranked') && about.value) body.about = about.value;
        if (kind.value === 'rename') body.name = name.value;
        if (kind.value === 'mark') {
          body.mark = mark.value;
          if (since.value) body.since = new Date(`${since.value}T00:00:00Z`).toISOString();
        }
        if (kind.value === 'set_role') body.role = role.value;
        try {
          const answer = await post(`/v1/mod/players/${encodeURIComponent(id)}/actions`, body);
          done(answer, t('mod_action_done'));
        } catch (e) { toastError(e); }
      },
    },
    h('h2', { text: t('mod_act') }),
    h('div', { class: 'fields' }, field(t('mod_action'), kind), extraBox),
    field(t('mod_reason'), reason),
    h('button', { type: 'submit', class: 'button', 'data-testid': 'mod-act', text: t('mod_do') }));
  }

  function sanctions() {
    if (!file.sanctions.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list', 'data-testid': 'mod-sanctions' }, file.sanctions.map((s) => {
      const reason = reasonInput(`mod-lift-reason-${s.id}`);
      return h('li', { class: `mod-sanction ${s.active ? 'active' : ''}`, 'data-testid': 'mod-sanction', dataset: { kind: s.kind, active: String(s.active) } },
        h('strong', { text: t(`sanction_${s.kind}`) }),
        h('span', { text: ` · ${s.reason}` }),
        h('span', { class: 'muted small', text: ` · ${when(s.at)}${s.until ? ` → ${when(s.until)}` : ''}` }),
        s.by ? h('span', { class: 'muted small' }, ` · ${t('mod_by')} `, playerLink(s.by)) : null,
        s.lifted_at ? h('span', { class: 'pill', text: t('mod_lifted', { at: when(s.lifted_at) }) }) : null,
        s.active ? h('form', {
          class: 'mod-inline',
          onsubmit: async (event) => {
            event.preventDefault();
            try {
              const answer = await post(`/v1/mod/sanctions/${s.id}/lift`, { reason: reason.value });
              done(answer, t('mod_lifted_now'));
            } catch (e) { toastError(e); }
          },
        }, reason, h('button', { type: 'submit', class: 'button small ghost', 'data-testid': 'mod-lift', text: t('mod_lift') })) : null);
    }));
  }

  function notes() {
    const text = h('textarea', { maxlength: 2000, rows: 2, 'data-testid': 'mod-note-text' });
    return [
      file.notes.length
        ? h('ul', { class: 'mod-list', 'data-testid': 'mod-notes' }, file.notes.map((n) => h('li', {},
          h('span', { text: n.text }), h('span', { class: 'muted small' }, ` · ${when(n.at)} · `, playerLink(n.by)))))
        : h('p', { class: 'muted', text: t('mod_none') }),
      h('form', {
        class: 'mod-inline',
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await post(`/v1/mod/players/${encodeURIComponent(id)}/notes`, { text: text.value });
            load();
          } catch (e) { toastError(e); }
        },
      }, text, h('button', { type: 'submit', class: 'button small', 'data-testid': 'mod-add-note', text: t('mod_add_note') })),
    ];
  }

  function reports() {
    if (!file.reports.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list' }, file.reports.map((r) => h('li', {},
      h('span', { class: 'pill', text: t(`report_reason_${r.reason}`) }), ' ',
      reporterLink(r),
      r.reporter ? h('span', { class: 'muted small', 'data-testid': 'reporter-standing', text: ` (${t(`reporter_${r.reporter_standing}`)})` }) : null,
      h('span', { class: 'muted small', text: ` · ${when(r.at)}${r.closed_at ? ` · ${t('mod_closed')}` : ''}` }),
      r.evidence ? evidenceView(r.evidence) : r.text ? h('p', { class: 'small', text: r.text }) : null)));
  }

  function offences() {
    if (!file.offences.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list' }, file.offences.map((o) => h('li', {},
      h('span', { text: t(`offence_${o.kind}`) }),
      h('span', { class: 'muted small', text: ` · ${when(o.at)}${o.forgiven ? ` · ${t('mod_forgiven')}` : ''}` }), ' ',
      h('a', { class: 'small', href: `/watch/${o.game_id}`, text: t('mod_the_game') }))));
  }

  function linked() {
    if (!file.linked.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list', 'data-testid': 'mod-linked' }, file.linked.map((l) => h('li', {},
      playerLink(l.player),
      h('span', { class: 'muted small', text: ` · ${l.network} · ${when(l.last_seen)} · ${t('mod_games_together', { n: l.games_together })}` }))));
  }

  function opponents() {
    if (!file.opponents.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list', 'data-testid': 'mod-opponents' }, file.opponents.map((o) => h('li', {},
      playerLink(o.player),
      h('span', { class: 'small', text: ` · ${t('mod_games_together', { n: o.games })} · ${t('mod_rated_score', { n: o.rated, w: o.wins, d: o.draws, l: o.losses })}` }))));
  }

  function ratings() {
    if (!file.ratings.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('div', { class: 'mod-ratings' }, file.ratings.map((r) => h('details', { class: 'mod-rating', 'data-testid': `mod-rating-${r.variant}` },
      h('summary', { text: `${variantName(r.variant)}: ${number(r.rating)} (RD ${number(r.rd)}) · ${t('mod_rated_games', { n: r.games })}` }),
      h('ol', { class: 'mod-history' }, r.history.map((p) => h('li', { class: p.voided_by ? 'voided' : '', dataset: { voided: p.voided_by || '' } },
        h('a', { href: `/watch/${p.game_id}`, text: when(p.at) }),
        h('span', { text: ` ${number(p.rating)}` }),
        p.voided_by ? h('span', { class: 'pill', text: t('mod_voided_by', { mark: t(`mod_mark_${p.voided_by}`) }) }) : null))))));
  }

  function games() {
    if (!file.games.length) return h('p', { class: 'muted', text: t('mod_none') });
    return h('ul', { class: 'mod-list', 'data-testid': 'mod-games' }, file.games.map((g) => h('li', {},
      h('a', { href: `/watch/${g.id}`, 'data-testid': 'mod-game', text: `${variantName(g.variant)} · ${g.rated ? t('rated') : t('casual')}` }),
      h('span', { text: ' · ' }), g.opponent ? playerLink(g.opponent) : h('span', { text: t('mod_vs_ai', { level: g.ai ?? '' }) }),
      h('span', { class: 'small', text: ` · ${g.outcome ? t(`mod_outcome_${g.outcome}`) : t('live_badge')} · ${t('plies', { n: g.plies })} · ${when(g.at)}` }),
      g.analysed ? h('span', { class: 'pill', text: t('mod_analysed') }) : null)));
  }

  function section(title, body) {
    return h('section', { class: 'mod-section' }, h('h2', { text: title }), body);
  }

  function draw() {
    let body;
    if (error) body = [failure(error)];
    else if (!file) body = [h('p', { class: 'muted', text: t('loading') })];
    else {
      document.title = `${file.player.name} · ${t('mod_title')}`;
      body = [
        h('div', { class: 'mod-account-head', 'data-testid': 'mod-account' },
          h('h2', { 'data-testid': 'mod-account-name', text: file.player.name }),
          h('span', { class: 'badge', text: t(`role_${file.role}`) }),
          file.closed_at ? h('span', { class: 'pill loss', 'data-testid': 'mod-account-closed', text: t('mod_account_closed') }) : null,
          h('a', { class: 'small', href: `/player/${file.player.id}`, text: t('mod_public_profile') })),
        h('p', { class: 'muted small', text: [
          file.username ? `${t('mod_username')}: ${file.username}` : t('guest'),
          `${t('mod_created')}: ${when(file.created_at)}`,
          `${t('mod_last_seen')}: ${when(file.last_seen_at)}`,
          file.signup_network ? `${t('mod_network')}: ${file.signup_network}` : null,
        ].filter(Boolean).join(' · ') }),
        recompute ? h('p', { class: 'my-rank', 'data-testid': 'mod-recompute', dataset: { done: String(Boolean(recompute.done)) },
          text: recompute.done ? t('mod_recomputed', { n: recompute.ratings_changed ?? 0, ms: recompute.millis ?? 0 }) : t('mod_recomputing') }) : null,
        actionForm(),
        section(t('mod_sanctions'), sanctions()),
        section(t('mod_notes'), notes()),
        section(t('mod_reports'), reports()),
        section(t('mod_offences'), offences()),
        section(t('mod_linked'), linked()),
        section(t('mod_opponents'), opponents()),
        section(t('mod_ratings'), ratings()),
        section(t('mod_games'), games()),
      ];
    }
    modPage(root, null, t('mod_account_title'), body);
  }

  draw();
  load();
  return { relabel: draw, destroy() { destroyed = true; } };
}
