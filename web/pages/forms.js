// Small form controls shared by the lobby's cards.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { VARIANTS, variantName } from '../format.js';

export function radioGroup(name, options, selected, testid, onChange) {
  return h('div', { class: 'segmented', role: 'radiogroup', 'data-testid': testid },
    options.map((option) => h('label', { class: 'segment' },
      h('input', {
        type: 'radio', name, value: option.value, checked: option.value === selected,
        onchange: () => onChange(option.value),
      }),
      h('span', { text: option.label }))));
}

export function select(testid, options, selected, onChange) {
  return h('select', { 'data-testid': testid, onchange: (event) => onChange(event.target.value) },
    options.map((option) => h('option', { value: option.value, selected: option.value === selected, text: option.label })));
}

export function field(labelKey, control) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label', text: t(labelKey) }), control);
}

export const variantOptions = () => VARIANTS.map((v) => ({ value: v, label: variantName(v) }));
