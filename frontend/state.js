// The tab's settings and their place in the URL.
//
// Inside TensorBoard the tab lives in an iframe whose own URL is rebuilt on every load, so the
// settings go into the TensorBoard page's hash, under TensorBoard's convention for plugin data:
// `#aggregate&p.aggregate.band=sem&p.aggregate.smoothing=0.6`. A reload or a shared link restores
// them. Opened on its own (no parent page), the tab uses its own hash with the same keys.
//
// The engine options' defaults and allowed values are the backend's (`/runs` answers them as
// `options`); only the view options, which never reach the backend, have their defaults here. Until
// the first answer the state holds the view defaults and what the hash says; the served defaults
// then fill in every engine option the hash left out (the hash wins). Only values that differ from
// the defaults are written back to the hash.

const PREFIX = "p.aggregate.";

/**
 * View options: they change the drawing only, and are never sent to the engine with every request.
 * compare_tag, score and baseline are the Compare section's (sent with /compare only; score's default
 * is the backend's); along holds, per card, the two groups compared along x: JSON {tag: [a, b]}.
 */
export const VIEW_DEFAULTS = Object.freeze({
  log_y: false,
  show_runs: false,
  compare_tag: "",
  score: "",
  baseline: "",
  along: "",
});

/** The Compare section's options with a served default (sent with /compare only). */
const COMPARE_OPTIONS = ["score"];

/** The engine options the tab's controls set, in the order they are sent (defaults: the backend's). */
export const ENGINE_OPTIONS = ["runs", "tags", "group_by", "center", "band", "smoothing", "x", "min_runs"];

/** Every setting the hash may hold. */
export const SETTINGS = [...ENGINE_OPTIONS, ...Object.keys(VIEW_DEFAULTS)];

/** The window whose hash holds the settings: TensorBoard's page when reachable, else this one. */
export function hashWindow() {
  try {
    if (window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    // A parent page from another origin cannot be read: keep the settings in our own hash.
  }
  return window;
}

function splitHash(hash) {
  return hash.replace(/^#/, "").split("&").filter((part) => part.length > 0);
}

/**
 * A value read from the hash (a string) in the type of its default: booleans for the view's
 * checkboxes, numbers where the served default is a number. A value that is not a number stays the
 * text it is and is sent on as it is: the backend says what is wrong with it, next to its control.
 */
function coerce(raw, fallback) {
  if (typeof raw !== "string") return raw;
  if (typeof fallback === "boolean") return raw === "1" || raw === "true";
  if (typeof fallback === "number") {
    const value = raw.trim() === "" ? NaN : Number(raw);
    return Number.isFinite(value) ? value : raw;
  }
  return raw;
}

/**
 * The settings in the URL hash, over the view defaults. An engine option the hash does not hold is
 * left out (undefined) until the served defaults fill it in (`withDefaults`).
 */
export function readState(win = hashWindow()) {
  const state = { ...VIEW_DEFAULTS };
  for (const part of splitHash(win.location.hash)) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    let key;
    let value;
    try {
      key = decodeURIComponent(part.slice(0, eq));
      value = decodeURIComponent(part.slice(eq + 1));
    } catch {
      continue; // a malformed escape: ignore that one part
    }
    if (!key.startsWith(PREFIX)) continue;
    key = key.slice(PREFIX.length);
    if (SETTINGS.includes(key)) state[key] = coerce(value, VIEW_DEFAULTS[key]);
  }
  return state;
}

/** Every setting's default: the served engine defaults (`options` from /runs) and the view's own. */
export function defaultsOf(options) {
  const defaults = { ...VIEW_DEFAULTS };
  for (const key of [...ENGINE_OPTIONS, ...COMPARE_OPTIONS]) {
    if (options && options[key] && "default" in options[key]) defaults[key] = options[key].default;
  }
  return defaults;
}

/**
 * `state` with every engine option it lacks set to the served default, and the values read from
 * the hash as text turned into the type of their default (the hash wins over the defaults).
 */
export function withDefaults(state, options) {
  const defaults = defaultsOf(options);
  const filled = { ...state };
  for (const key of ENGINE_OPTIONS) {
    filled[key] = filled[key] === undefined ? defaults[key] : coerce(filled[key], defaults[key]);
  }
  for (const key of COMPARE_OPTIONS) if (filled[key] === "") filled[key] = defaults[key];
  return filled;
}

/** Whether every engine option has a value (the served defaults have been applied). */
export function isComplete(state) {
  return ENGINE_OPTIONS.every((key) => state[key] !== undefined);
}

/** The label the backend gives `value` of the menu option `key` (the value itself if it gives none). */
export function optionLabel(options, key, value) {
  const values = options && options[key] && options[key].values;
  const pair = Array.isArray(values) ? values.find((entry) => Array.isArray(entry) && entry[0] === value) : null;
  return pair ? String(pair[1]) : String(value);
}

/** What the horizontal axis shows: the served label of step/relative/wall, or the tag of `tag:NAME`. */
export function xLabel(options, x) {
  return typeof x === "string" && x.startsWith("tag:") ? x.slice(4) : optionLabel(options, "x", x);
}

/** Whether the hash holds any of the tab's settings. */
export function hashHasState(win = hashWindow()) {
  return splitHash(win.location.hash).some((part) => decodeURIComponentSafe(part).startsWith(PREFIX));
}

function decodeURIComponentSafe(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function encodeValue(value) {
  if (typeof value === "boolean") return value ? "1" : "0";
  return encodeURIComponent(String(value));
}

/**
 * Write the settings that differ from `defaults` into the hash, keeping every part that is not ours
 * (TensorBoard's tab name and other plugins' data) in place. A setting whose default is not known
 * yet is written when it has a value. Replaces the history entry, so moving a slider does not fill
 * the back button.
 */
export function writeState(state, defaults, win = hashWindow()) {
  const kept = splitHash(win.location.hash).filter((part) => !decodeURIComponentSafe(part).startsWith(PREFIX));
  if (win !== window && kept.length === 0) kept.push("aggregate");
  const ours = SETTINGS.filter((key) => state[key] !== undefined && state[key] !== defaults[key]).map(
    (key) => `${PREFIX}${key}=${encodeValue(state[key])}`,
  );
  const hash = [...kept, ...ours].join("&");
  const url = new URL(win.location.href);
  url.hash = hash;
  if (url.href !== win.location.href) win.history.replaceState(win.history.state, "", url.href);
}

/**
 * URLSearchParams with every engine option of `state` that has a value (sent explicitly, so what is
 * drawn is what was asked; one without a value yet takes the backend's default).
 */
export function engineParams(state, extra = {}) {
  const params = new URLSearchParams();
  for (const key of ENGINE_OPTIONS) if (state[key] !== undefined) params.set(key, String(state[key]));
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  return params;
}

/** The along-the-curve choices of the state: {tag: [group a, group b]} (an unreadable value: none). */
export function alongChoices(state) {
  if (!state.along) return {};
  try {
    const parsed = JSON.parse(state.along);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return {};
    const out = {};
    for (const [tag, pair] of Object.entries(parsed)) {
      if (Array.isArray(pair) && pair.length === 2 && pair.every((g) => typeof g === "string" && g)) {
        out[tag] = [pair[0], pair[1]];
      }
    }
    return out;
  } catch {
    return {};
  }
}

/** The state's `along` value with the choice of `tag` set to `pair` ([a, b]) or removed (null). */
export function withAlong(state, tag, pair) {
  const choices = alongChoices(state);
  if (pair) choices[tag] = pair;
  else delete choices[tag];
  return Object.keys(choices).length ? JSON.stringify(choices) : "";
}

const COLLATOR = new Intl.Collator("en", { numeric: true });

/** Natural order of names: metric_2 before metric_10 (as TensorBoard's Scalars tab sorts tags). */
export function naturalCompare(a, b) {
  return COLLATOR.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
