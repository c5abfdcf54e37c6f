// Display rules shared by every page. No DOM here, so node's test runner
// checks these rules directly (ui/web/jstest).
//
// Unknown is not zero: a missing count is "not reported", a missing cost
// is "—", and a sum with unknown parts carries "+?".

export const NOT_REPORTED = 'not reported';
export const UNKNOWN_COST = '—';
const UNKNOWN_MARK = '+?';

const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const msFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

function isMissing(v) {
  return v === null || v === undefined || v === '';
}

// costWithStatus is a single call's cost: a decimal string in USD, shown
// as sent (parsing it to a float would round), or null when unknown, shown
// with why: "— (unknown_model)".
export function costWithStatus(usd, status) {
  if (isMissing(usd)) {
    return status ? `${UNKNOWN_COST} (${status})` : UNKNOWN_COST;
  }
  return `$${usd}`;
}

// totalCost is a sum over calls: "$1.23 +?" when some of them had no known
// cost, "—" when the sum itself is unknown.
export function totalCost(usd, unknownCalls) {
  if (isMissing(usd)) {
    return UNKNOWN_COST;
  }
  return unknownCalls > 0 ? `$${usd} ${UNKNOWN_MARK}` : `$${usd}`;
}

// count formats an integer count; null is "not reported", never 0.
export function count(n) {
  if (isMissing(n)) {
    return NOT_REPORTED;
  }
  const v = Number(n);
  return Number.isFinite(v) ? intFormat.format(v) : String(n);
}

// plural counts things: "1 call", "2,000 calls".
export function plural(n, noun) {
  return `${count(n)} ${noun}${Number(n) === 1 ? '' : 's'}`;
}

// ms formats a duration in milliseconds.
export function ms(n) {
  if (isMissing(n)) {
    return NOT_REPORTED;
  }
  const v = Number(n);
  return Number.isFinite(v) ? `${msFormat.format(v)} ms` : String(n);
}

// number formats a sampling parameter or another plain number as sent.
export function number(n) {
  return isMissing(n) ? NOT_REPORTED : String(n);
}

// isZeroTime: Go's zero time.Time, which means "not set".
function isZeroTime(iso) {
  return typeof iso === 'string' && iso.startsWith('0001-01-01');
}

// time formats an RFC 3339 timestamp in UTC ISO form, without a ".000"
// millisecond part. Something that does not parse is shown as sent.
export function time(iso) {
  if (isMissing(iso)) {
    return NOT_REPORTED;
  }
  if (isZeroTime(iso)) {
    return 'not set';
  }
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) {
    return String(iso);
  }
  return d.toISOString().replace('.000Z', 'Z');
}

// timeValue is a timestamp in milliseconds since the epoch, or NaN.
export function timeValue(iso) {
  if (isMissing(iso) || isZeroTime(iso)) {
    return NaN;
  }
  return new Date(iso).getTime();
}

// Datetime-local inputs carry no zone; the UI treats them as UTC, like
// every time it shows.

// toInput turns an RFC 3339 time into a datetime-local value ("" if none).
export function toInput(iso) {
  const t = timeValue(iso);
  return Number.isNaN(t) ? '' : new Date(t).toISOString().slice(0, 16);
}

// fromInput turns a datetime-local value (read as UTC) into RFC 3339,
// "" for an empty or malformed value.
export function fromInput(value) {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d{1,3})?)?$/.exec(value || '');
  if (!m) {
    return '';
  }
  const d = new Date(`${m[1]}${m[2] || ':00'}Z`);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().replace('.000Z', 'Z');
}

// bucketFor picks the time-series bucket for a range: hours up to three
// days, days beyond or when the range is open.
export function bucketFor(from, to) {
  const a = timeValue(from);
  const b = timeValue(to);
  if (Number.isNaN(a) || Number.isNaN(b)) {
    return 'day';
  }
  return b - a <= 3 * 24 * 3600 * 1000 ? 'hour' : 'day';
}

// rate formats num/den as a percentage with its parts: "80.0% (8/10)".
export function rate(num, den) {
  if (isMissing(num) || isMissing(den) || Number(den) === 0) {
    return 'n/a';
  }
  return `${((Number(num) / Number(den)) * 100).toFixed(1)}% (${num}/${den})`;
}

// list joins strings; empty or null shows the fallback.
export function list(values, fallback) {
  return Array.isArray(values) && values.length > 0 ? values.join(', ') : fallback;
}

// pretty returns stored content for display: indented when it is a JSON
// object or array, otherwise exactly as stored. The result is only ever
// shown as text.
export function pretty(content) {
  const text = typeof content === 'string' ? content : String(content ?? '');
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') {
    return text;
  }
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (e) {
    return text;
  }
}

// partialCount is a token total over groups: "1,234 +?" when some group
// reported no count although the total has one.
export function partialCount(total, parts) {
  const partial = !(total === null || total === undefined) && parts.some((v) => v === null || v === undefined);
  return partial ? `${count(total)} ${UNKNOWN_MARK}` : count(total);
}

// Roles in increasing power.
const ROLE_RANK = { viewer: 1, auditor: 2, admin: 3 };

// roleFor is the user's role for a tenant: the stronger of its own grant
// and the grant of all tenants ("*"). "" when neither grants it.
export function roleFor(grants, tenant) {
  let best = '';
  for (const key of [tenant, '*']) {
    const role = grants && Object.prototype.hasOwnProperty.call(grants, key) ? grants[key] : '';
    if ((ROLE_RANK[role] || 0) > (ROLE_RANK[best] || 0)) {
      best = role;
    }
  }
  return best;
}

// atLeast reports whether role is as strong as min.
export function atLeast(role, min) {
  return (ROLE_RANK[role] || 0) >= ROLE_RANK[min];
}

// anyGrant reports whether some grant is at least min.
export function anyGrant(grants, min) {
  return Object.values(grants || {}).some((role) => atLeast(role, min));
}

// grantsText describes grants: "all tenants: admin · acme: viewer".
export function grantsText(grants) {
  const entries = Object.entries(grants || {}).sort(([a], [b]) => (a === '*' ? -1 : b === '*' ? 1 : a.localeCompare(b)));
  if (entries.length === 0) {
    return 'no grants';
  }
  return entries.map(([tenant, role]) => `${tenant === '*' ? 'all tenants' : tenant}: ${role}`).join(' · ');
}

// safeNext is where to go after signing in: a path of this site, never
// another origin, never the login page itself.
export function safeNext(next) {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.includes('\\')) {
    return '/';
  }
  if (next === '/login' || next.startsWith('/login?')) {
    return '/';
  }
  return next;
}

// safeDownload accepts only the export download path the API documents.
export function safeDownload(path) {
  return typeof path === 'string' && /^\/api\/v1\/exports\/[A-Za-z0-9_.-]+\.zip$/.test(path) ? path : '';
}

// histogram reads latency buckets: per-bucket counts (not cumulative),
// each up to its bound le_ms; the last, without bound, holds the slowest.
export function histogram(buckets) {
  return (Array.isArray(buckets) ? buckets : []).map((b) => ({
    le: isMissing(b.le_ms) ? null : Number(b.le_ms),
    count: Number(b.count) || 0,
  }));
}

// bucketLabel names a latency bucket by its bounds: "≤100 ms", ">5,000 ms".
export function bucketLabel(buckets, i) {
  const b = buckets[i];
  if (b.le !== null) {
    return `≤${msFormat.format(b.le)} ms`;
  }
  const prev = i > 0 ? buckets[i - 1].le : null;
  return prev === null ? 'all' : `>${msFormat.format(prev)} ms`;
}

// replaySummary reads a replay record's report (a replay.Summary in JSON)
// without trusting its shape. known is false when the report is not the
// expected object; the raw text is still shown then.
export function replaySummary(report) {
  let parsed;
  try {
    parsed = JSON.parse(report);
  } catch (e) {
    return { known: false, error: 'the report is not valid JSON' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { known: false, error: 'the report is not a JSON object' };
  }
  const variants = Array.isArray(parsed.variants) ? parsed.variants.filter((v) => v && typeof v === 'object') : null;
  let divergence = null;
  if (variants) {
    const first = variants.find((v) => !v.matches_original && v.divergence && typeof v.divergence === 'object');
    if (first) {
      divergence = first.divergence;
    }
  }
  const str = (v) => (typeof v === 'string' ? v : '');
  const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    known: true,
    status: str(parsed.status),
    reason: str(parsed.reason),
    lifecycle: str(parsed.lifecycle),
    failed: num(parsed.failed),
    requests: num(parsed.requests),
    firstError: str(parsed.first_error),
    estimatedCost: str(parsed.estimated_cost_per_replay),
    tokenizer: str(parsed.tokenizer),
    tokenNote: str(parsed.token_note),
    exactMatchRate: num(parsed.exact_match_rate),
    distinctOutputs: variants ? variants.length : null,
    variants: variants || [],
    divergence,
    paramChanges: Array.isArray(parsed.param_changes) ? parsed.param_changes.filter((p) => p && typeof p === 'object') : [],
  };
}

// divergenceText describes where an output first differs from the
// original, counting from 1: "character 21, token 5 of 6 (o200k_base)"; as
// `docket replay` prints it.
export function divergenceText(d) {
  if (!d || typeof d !== 'object') {
    return 'none';
  }
  if (typeof d.char !== 'number') {
    return 'position not recorded';
  }
  let text = `character ${d.char + 1}`;
  const from = typeof d.tokens_from === 'string' && d.tokens_from !== '' ? ` (${d.tokens_from})` : '';
  if (typeof d.token === 'number' && typeof d.tokens === 'number') {
    text += d.token >= d.tokens ? `, after the last of ${d.tokens} tokens${from}` : `, token ${d.token + 1} of ${d.tokens}${from}`;
  } else if (typeof d.token === 'number') {
    text += `, token ${d.token + 1}`;
  }
  return text;
}
