// The lobby's other ways to start: against the AI, a friend by link, and
// two people on this device. Each card draws from `form`, which the page
// keeps, so a redraw (a language switch) keeps what was chosen.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { post } from '../api.js';
import { navigate } from '../router.js';
import { errorMessage, timeControlLabel } from '../format.js';
import { toast } from '../ui.js';
import { field, select, variantOptions } from './forms.js';

const LEVELS = ['beginner', 'intermediate', 'advanced', 'perfect'];
// The exact solver exists for Kalah only (`no perfect AI for oware`).
const PERFECT_VARIANTS = new Set(['kalah']);

export function newStartForm() {
  return {
    aiVariant: 'kalah', aiLevel: 'beginner', aiSide: 'first', aiSeeds: '4',
    inviteVariant: 'kalah', inviteTc: '', inviteRated: false, inviteSeeds: '4',
    seatVariant: 'kalah', seatSeeds: '4',
  };
}

// Kalah may start with 3 to 6 stones a pit (the server's range); the
// other games have one setup.
const SEEDS = ['3', '4', '5', '6'];

function variantSpec(variant, seeds) {
  return variant === 'kalah' ? { variant, seeds: Number(seeds) } : { variant };
}

// The seeds field, shown for Kalah only: redrawn when the variant changes.
function seedsField(form, variantKey, seedsKey, testid) {
  const box = h('div', { class: 'field-box' });
  const draw = () => box.replaceChildren(...(form[variantKey] === 'kalah'
    ? [field('seeds', select(testid, SEEDS.map((n) => ({ value: n, label: t('seeds_n', { n }) })), form[seedsKey], (v) => { form[seedsKey] = v; }))]
    : []));
  draw();
  return { box, draw };
}

function tcKey(tc) {
  return tc ? `${tc.initial_secs}+${tc.increment_secs}` : '';
}

function tcFromKey(key) {
  if (!key) return null;
  const [initial, increment] = key.split('+').map(Number);
  return { initial_secs: initial, increment_secs: increment };
}

async function start(button, path, body, to = (answer) => `/game/${answer.game_id}`) {
  button.disabled = true;
  try {
    navigate(to(await post(path, body)));
  } catch (error) {
    toast(errorMessage(error), 'error');
    button.disabled = false;
  }
}

export function aiCard(form) {
  const levelBox = h('div', { class: 'field-box' });
  const drawLevels = () => {
    const levels = LEVELS.filter((level) => level !== 'perfect' || PERFECT_VARIANTS.has(form.aiVariant));
    if (!levels.includes(form.aiLevel)) form.aiLevel = 'beginner';
    levelBox.replaceChildren(field('ai_level',
      select('ai-level', levels.map((l) => ({ value: l, label: t(`level_${l}`) })), form.aiLevel, (v) => { form.aiLevel = v; })));
  };
  drawLevels();
  const seeds = seedsField(form, 'aiVariant', 'aiSeeds', 'ai-seeds');
  return h('section', { class: 'card play-card', 'data-testid': 'ai-card' },
    h('h2', { text: t('ai_title') }),
    h('p', { class: 'muted', text: t('ai_blurb') }),
    h('div', { class: 'fields' },
      field('variant', select('ai-variant', variantOptions(), form.aiVariant, (v) => { form.aiVariant = v; drawLevels(); seeds.draw(); })),
      levelBox,
      seeds.box,
      field('side', select('ai-side', ['first', 'second', 'random'].map((s) => ({ value: s, label: t(`side_${s}`) })), form.aiSide, (v) => { form.aiSide = v; }))),
    h('button', {
      type: 'button', class: 'button wide', 'data-testid': 'ai-start', text: t('play_ai'),
      onclick: (event) => start(event.currentTarget, '/v1/ai-games', {
        variant: variantSpec(form.aiVariant, form.aiSeeds), level: form.aiLevel, side: form.aiSide,
      }),
    }));
}

// Friend games may use any queue's clock, or none.
export function inviteCard(form, queues) {
  const tcs = [{ value: '', label: t('untimed') }].concat(
    [...new Set(queues.map((q) => tcKey(q.time_control)))].map((key) => ({ value: key, label: timeControlLabel(tcFromKey(key)) })));
  const seeds = seedsField(form, 'inviteVariant', 'inviteSeeds', 'invite-seeds');
  // A rated game has a clock (the server refuses one without): ticking
  // "ranked" on an untimed game picks the first clock, and choosing
  // "untimed" unticks it.
  const clockSelect = select('invite-tc', tcs, form.inviteTc, (v) => {
    form.inviteTc = v;
    if (!v && form.inviteRated) { form.inviteRated = false; rated.checked = false; }
  });
  const clock = field('time_control', clockSelect);
  const rated = h('input', {
    type: 'checkbox', 'data-testid': 'invite-rated', checked: form.inviteRated,
    onchange: (e) => {
      form.inviteRated = e.target.checked;
      if (form.inviteRated && !form.inviteTc && tcs.length > 1) { form.inviteTc = tcs[1].value; clockSelect.value = form.inviteTc; }
    },
  });
  return h('section', { class: 'card play-card', 'data-testid': 'invite-card' },
    h('h2', { text: t('invite_title') }),
    h('p', { class: 'muted', text: t('invite_blurb') }),
    h('div', { class: 'fields' },
      field('variant', select('invite-variant', variantOptions(), form.inviteVariant, (v) => { form.inviteVariant = v; seeds.draw(); })),
      seeds.box,
      clock,
      h('label', { class: 'check' }, rated, h('span', { text: t('rated_game') }))),
    h('p', { class: 'muted small', text: t('rated_needs_clock') }),
    h('button', {
      type: 'button', class: 'button wide', 'data-testid': 'invite-create', text: t('create_invite'),
      onclick: (event) => start(event.currentTarget, '/v1/invites', {
        variant: variantSpec(form.inviteVariant, form.inviteSeeds), time_control: tcFromKey(form.inviteTc), rated: form.inviteRated,
      }, (invite) => `/invite/${encodeURIComponent(invite.code)}`),
    }));
}

export function hotseatCard(form) {
  const seeds = seedsField(form, 'seatVariant', 'seatSeeds', 'hotseat-seeds');
  return h('section', { class: 'card play-card', 'data-testid': 'hotseat-card' },
    h('h2', { text: t('hotseat_title') }),
    h('p', { class: 'muted', text: t('hotseat_blurb') }),
    h('div', { class: 'fields' },
      field('variant', select('hotseat-variant', variantOptions(), form.seatVariant, (v) => { form.seatVariant = v; seeds.draw(); })),
      seeds.box),
    h('button', {
      type: 'button', class: 'button wide', 'data-testid': 'hotseat-start', text: t('start_hotseat'),
      onclick: (event) => start(event.currentTarget, '/v1/hotseat-games', { variant: variantSpec(form.seatVariant, form.seatSeeds) }),
    }));
}
