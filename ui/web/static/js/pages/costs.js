// Costs grouped by day, model or tenant. Unknown costs are never counted as
// zero: a sum with unknown parts is marked +?, an unknown sum is —.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { load, pageHeader, section, table, td, num, n, empty } from '../ui.js';
import { filterBar, readFilters } from '../filters.js';
import * as fmt from '../format.js';

const GROUPS = { day: 'Day (UTC)', model: 'Model', tenant: 'Tenant' };
const HEADINGS = { day: 'Cost per day (UTC)', model: 'Cost per model', tenant: 'Cost per tenant' };

export default function costs(ctx) {
  const filters = readFilters(ctx.query);
  const group = GROUPS[ctx.query.get('group')] ? ctx.query.get('group') : 'day';
  const groupSelect = h('select', { id: 'cost-group', name: 'group', testid: 'cost-group' },
    Object.entries(GROUPS).map(([value, label]) => h('option', { value, selected: value === group }, label)));
  const box = h('div');
  replace(ctx.main,
    pageHeader('Costs'),
    filterBar(ctx, '/costs', filters, [['cost-group', 'Group by', groupSelect]]),
    section(HEADINGS[group], { testid: 'costs' }, box));
  load(box, 'costs', api.get(`/api/v1/costs${api.query(Object.assign({ group }, filters))}`, ctx.signal), (data) => {
    const rows = Array.isArray(data.rows) ? data.rows : [];
    if (rows.length === 0) {
      return empty('No calls match these filters.', 'costs-empty');
    }
    const total = data.total || {};
    const known = rows.map((r) => (r.cost_usd === null || r.cost_usd === undefined ? null : Number(r.cost_usd))).filter((v) => v !== null && Number.isFinite(v));
    const max = Math.max(0, ...known);
    const tokens = (key) => fmt.partialCount(total[key], rows.map((r) => r[key]));
    const share = (r) => {
      const v = r.cost_usd === null || r.cost_usd === undefined ? NaN : Number(r.cost_usd);
      const bar = h('span', { class: 'share-bar' });
      // A CSSOM property, which the CSP allows (a style attribute it would not).
      bar.style.width = `${max > 0 && Number.isFinite(v) ? Math.round((v / max) * 100) : 0}%`;
      return h('span', { class: 'share' }, bar);
    };
    const unknownCalls = Number(total.cost_unknown_calls) || 0;
    return [
      table({ testid: 'cost-table' },
        [GROUPS[group], n('Calls'), n('Cost'), n('Unknown cost calls'), n('Input tokens'), n('Output tokens'), 'Share of largest'],
        [
          ...rows.map((r) => h('tr', { testid: 'cost-row' },
            td(r.key, { class: 'mono', field: 'key' }),
            num(fmt.count(r.calls), { field: 'calls' }),
            num(fmt.totalCost(r.cost_usd, Number(r.cost_unknown_calls) || 0), { field: 'cost_usd' }),
            num(fmt.count(r.cost_unknown_calls), { field: 'cost_unknown_calls' }),
            num(fmt.count(r.input_tokens), { field: 'input_tokens' }),
            num(fmt.count(r.output_tokens), { field: 'output_tokens' }),
            td(share(r)))),
          h('tr', { class: 'total-row', testid: 'cost-total' },
            h('th', { scope: 'row' }, 'Total'),
            num(fmt.count(total.calls), { field: 'calls' }),
            num(fmt.totalCost(total.cost_usd, unknownCalls), { field: 'cost_usd' }),
            num(fmt.count(total.cost_unknown_calls), { field: 'cost_unknown_calls' }),
            num(tokens('input_tokens'), { field: 'input_tokens' }),
            num(tokens('output_tokens'), { field: 'output_tokens' }),
            td('')),
        ]),
      unknownCalls > 0 ? h('p', { class: 'callout callout-warn', testid: 'cost-unknown-note' },
        `${fmt.plural(unknownCalls, 'call')} had no known cost (unknown model or price, unpriced cache tokens, or token counts of uncertain meaning: see each call's cost status). Sums marked +? count only the known costs.`) : null,
    ];
  });
}
