"""The scripts pagebench runs in the pages it loads (`lab.browser`): what each document
observes from its start, what is read from it once loaded, and a deterministic run's
clock and random numbers. Text only: the browser module injects and evaluates them.
"""

from __future__ import annotations

#: Runs in every document before its own scripts: keeps the layout shifts, long tasks and
#: input events from the start (the Long Tasks API buffers none for a late observer).
OBSERVE_JS = """
(() => {
  const seen = {shifts: [], longtasks: []};
  Object.defineProperty(window, "__pagebench_seen", {value: seen, enumerable: false});
  const watch = (type, keep) => {
    try {
      new PerformanceObserver(list => list.getEntries().forEach(e => keep(e))).observe({type, buffered: true});
    } catch (error) { delete seen[type === "layout-shift" ? "shifts" : "longtasks"]; }
  };
  watch("layout-shift", e => seen.shifts.push({start: e.startTime, value: e.value, input: e.hadRecentInput}));
  watch("longtask", e => seen.longtasks.push({start: e.startTime, duration: e.duration}));
  const inputs = [];
  Object.defineProperty(window, "__pagebench_inputs", {value: inputs, enumerable: false});
  const input = e => { if (e.interactionId || e.entryType === "first-input") inputs.push({
    name: e.name, start: e.startTime, duration: e.duration, id: e.interactionId || 0}); };
  try {
    new PerformanceObserver(list => list.getEntries().forEach(input)).observe({type: "event", durationThreshold: 16});
    new PerformanceObserver(list => list.getEntries().forEach(input)).observe({type: "first-input", buffered: true});
  } catch (error) {}
})();
"""

#: Collected in the page after `load`: navigation timing, paints, LCP, resource timing, and
#: the layout shifts and long tasks OBSERVE_JS kept; as JSON text, which crosses to Python
#: in a fifth of the time Playwright's value-by-value serialisation takes (6 against 25 ms
#: for a 20-image page).
PAGE_METRICS_JS = """
async () => {
  const lcp = await new Promise(resolve => {
    let last = null;
    const po = new PerformanceObserver(list => {
      for (const e of list.getEntries()) last = e.startTime;
    });
    po.observe({type: 'largest-contentful-paint', buffered: true});
    setTimeout(() => { po.disconnect(); resolve(last); }, 0);
  });
  const nav = performance.getEntriesByType('navigation')[0].toJSON();
  const paints = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
  const resources = performance.getEntriesByType('resource').map(r => r.toJSON());
  const seen = window.__pagebench_seen || {};
  return JSON.stringify({nav, paints, lcp, resources, ...seen});
}
"""

#: A deterministic page's clock reads this at its navigation start (`deterministic_script`).
DETERMINISTIC_START = "2026-01-01T00:00:00Z"
DETERMINISTIC_START_MS = 1_767_225_600_000  # DETERMINISTIC_START in ms since the epoch

#: Runs in every document before its own scripts when a run asks for deterministic pages:
#: pages that put the time or random numbers in their requests (cache busters, ids)
#: ask for the same URLs each load, so a replay has them. The clock starts at START and
#: advances with performance.now() (elapsed time and timers still work); `new Date(x)`
#: and the other statics are the real ones. Math.random is a Weyl sequence through a
#: 32-bit integer hash (Wellons' lowbias32), restarted from the seed in every document.
_DETERMINISTIC_JS = """
(() => {
  const RealDate = globalThis.Date;  // not `Date`: the function below is hoisted over it
  const start = %(start)d;
  const clock = () => Math.floor(start + performance.now());
  function Date(...args) {
    if (new.target === undefined) return new RealDate(clock()).toString();
    return Reflect.construct(RealDate, args.length ? args : [clock()], new.target);
  }
  const hidden = (target, name, value) =>
    Object.defineProperty(target, name, {value, writable: true, configurable: true, enumerable: false});
  Object.defineProperty(Date, "length", {value: RealDate.length, configurable: true});
  Date.prototype = RealDate.prototype;
  hidden(Date, "now", function now() { return clock(); });
  hidden(Date, "parse", RealDate.parse);
  hidden(Date, "UTC", RealDate.UTC);
  hidden(RealDate.prototype, "constructor", Date);
  hidden(globalThis, "Date", Date);
  let state = %(seed)d;
  hidden(Math, "random", function random() {
    state = (state + 0x9e3779b9) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 16), 0x21f0aaad);
    x = Math.imul(x ^ (x >>> 15), 0x735a2d97);
    return ((x ^ (x >>> 15)) >>> 0) / 4294967296;
  });
})();
"""


def deterministic_script(seed: int, start_ms: int = DETERMINISTIC_START_MS) -> str:
    """The init script of a deterministic run: every page's clock starts at `start_ms`
    and its Math.random is seeded by `seed` (the spec's; any int, taken modulo 2**32)."""
    return _DETERMINISTIC_JS % {"start": start_ms, "seed": seed % 2**32}
