#!/usr/bin/env node
// tests/helpers/browser-drive.js — drive Debian's chromium (headless) with
// puppeteer-core through a list of steps on one page, for the tests of the
// web console (`ringfence console`), as a person with a browser would.
//
// Usage: node browser-drive.js PUPPETEER_DIR CHROMIUM_PATH STEPS
//
//   PUPPETEER_DIR  the puppeteer-core package directory and CHROMIUM_PATH
//                  the browser, both as scripts/browser.sh prints them
//                  (puppeteer=PATH, chromium=PATH)
//   STEPS          a JSON array of steps (text starting with "["), or the
//                  path of a file holding one, or "-" for standard input
//
// The steps run in order on one page. For each, one JSON line on stdout:
//   {"step":I,"ok":true,"value":V}   or   {"step":I,"ok":false,"error":"..."}
// I is the step's index in the array (from 0). The first failing step ends
// the run. Exit status: 0 every step ok; 1 a step failed; 2 usage (bad
// arguments or steps); 3 the browser did not start (a line
// {"step":"launch","ok":false,"error":"..."} says why). On stderr: the
// browser's version and how long it took to start, and diagnostics.
//
// Steps:
//   {"goto": URL}                        value: HTTP status of the main response
//                                        (null: no response, e.g. same-document)
//   {"waitFor": CSS}                     until a match is in the DOM (default 5000 ms)
//   {"waitGone": CSS}                    until no match is in the DOM or it is
//                                        hidden (display:none, visibility:hidden)
//   {"text": CSS}                        textContent of the first match, or null
//   {"texts": CSS}                       textContent of every match (array)
//   {"count": CSS}                       number of matches
//   {"click": CSS}                       waits for a visible match, clicks its
//                                        centre; a navigation that starts within
//                                        500 ms is waited for (to "load").
//                                        value: {"navigated":bool,"status":N|null}
//   {"attr": CSS, "name": ATTR}          the attribute of the first match, or null
//   {"type": CSS, "keys": STRING}        empties the first match (a text field,
//                                        firing "input"), then types STRING into
//                                        it key by key; value: the field's value
//   {"select": CSS, "value": STRING}     chooses the option of that value in the
//                                        first match (a <select>, firing
//                                        "change"); value: the selected values
//   {"eval": "EXPR"}                     EXPR evaluated in the page (a promise is
//                                        awaited); value: its JSON-serialisable result
//   {"screenshot": PATH, "fullPage": B}  a PNG (the uid running this must be able
//                                        to write PATH); value: PATH
//   {"cookies": true}                    every cookie of the browser:
//                                        [{"name","httpOnly","sameSite","secure","path"}]
//                                        (sameSite null when the cookie set none)
//   {"console": true}                    what the page reported so far, in order:
//                                        [{"type","text"}], type being a console
//                                        level ("log", "error", "warn" ...; the
//                                        browser's own messages too, among them
//                                        CSP violations: "error", "... violates the
//                                        following Content Security Policy ..."),
//                                        "pageerror" (an uncaught exception) or
//                                        "csp" (a securitypolicyviolation event:
//                                        "DIRECTIVE blocked URI")
//   {"fetch": URL, "method": M, "body": STRING, "headers": {...}}
//                                        fetch() run in the page (its origin, its
//                                        cookies: credentials "same-origin";
//                                        "redirect": "follow" unless the step says
//                                        "manual", when a redirect is status 0);
//                                        value: {"status":N}. A network error or a
//                                        CSP refusal fails the step.
// Any step may carry "timeout" (ms): waits default to 5000, everything else
// to RF_BROWSER_STEP_TIMEOUT (default 15000); every step is bounded.
//
// The browser: CHROMIUM_PATH, headless (new), --disable-gpu, no first run,
// talking to puppeteer over a pipe (no debugging port), with a temporary
// profile directory (under $TMPDIR, default /tmp; also the browser's HOME,
// XDG directories and TMPDIR) created here and removed at the end,
// whatever happened; the browser is always closed (its process group
// killed if closing takes too long), also on SIGINT, SIGTERM and SIGHUP
// (then the step under way fails "stopped by SIG...", exit 128+signal).
// Launching is bounded by RF_BROWSER_LAUNCH_TIMEOUT (ms, default 30000).
//
// Run it as an unprivileged uid: chromium's sandbox (user namespaces and
// seccomp-bpf, no setuid helper in Debian's package) then works, and
// chromium refuses to run as root with it. RF_BROWSER_NO_SANDBOX=1 adds
// --no-sandbox, for a machine where unprivileged user namespaces are off;
// as root without it this refuses to start.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const WAIT_DEFAULT = 5000;
const STEP_DEFAULT = posInt(process.env.RF_BROWSER_STEP_TIMEOUT, 15000);
const LAUNCH_TIMEOUT = posInt(process.env.RF_BROWSER_LAUNCH_TIMEOUT, 30000);
const CLOSE_TIMEOUT = 10000;
const NAV_START_WINDOW = 500;
const NO_SANDBOX = process.env.RF_BROWSER_NO_SANDBOX === '1';

function posInt(s, dflt) {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 ? n : dflt;
}

function usage(msg) {
  process.stderr.write(`browser-drive.js: ${msg}\n` +
    'usage: node browser-drive.js PUPPETEER_DIR CHROMIUM_PATH STEPS_JSON|FILE|-\n');
  process.exit(2);
}

function emit(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n');
}

function errText(e) {
  if (e instanceof Error) return e.message.split('\n')[0];
  return String(e);
}

// withTimeout(promise, ms, what) — the promise, or a rejection after ms
function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, ms));
}

// ---- arguments ---------------------------------------------------------------

const [pptDir, chromiumPath, stepsArg] = process.argv.slice(2);
if (process.argv.length !== 5) usage('expected 3 arguments');
let steps;
try {
  let text = stepsArg;
  if (stepsArg === '-') text = fs.readFileSync(0, 'utf8');
  else if (!stepsArg.trimStart().startsWith('[')) text = fs.readFileSync(stepsArg, 'utf8');
  steps = JSON.parse(text);
} catch (e) {
  usage(`cannot read the steps: ${errText(e)}`);
}
if (!Array.isArray(steps)) usage('the steps are not a JSON array');
const KINDS = ['goto', 'waitFor', 'waitGone', 'text', 'texts', 'count', 'click', 'attr',
  'type', 'select', 'eval', 'screenshot', 'cookies', 'console', 'fetch'];
steps.forEach((s, i) => {
  const kinds = s && typeof s === 'object' ? KINDS.filter(k => k in s) : [];
  if (kinds.length !== 1) usage(`step ${i}: needs exactly one of ${KINDS.join(', ')}: ${JSON.stringify(s)}`);
  if (s.timeout !== undefined && !(Number.isInteger(s.timeout) && s.timeout > 0)) {
    usage(`step ${i}: timeout must be a positive integer (ms)`);
  }
  if (kinds[0] === 'attr' && typeof s.name !== 'string') usage(`step ${i}: attr needs "name"`);
  if (kinds[0] === 'type' && typeof s.keys !== 'string') usage(`step ${i}: type needs "keys"`);
  if (kinds[0] === 'select' && typeof s.value !== 'string') usage(`step ${i}: select needs "value"`);
});
if (!fs.existsSync(chromiumPath)) usage(`no browser at ${chromiumPath}`);

let puppeteer;
try {
  puppeteer = require(path.resolve(pptDir));
} catch (e) {
  usage(`cannot load puppeteer-core from ${pptDir}: ${errText(e)}`);
}
if (process.getuid && process.getuid() === 0 && !NO_SANDBOX) {
  emit({ step: 'launch', ok: false,
    error: 'chromium runs as an unprivileged uid (its sandbox refuses root); or set RF_BROWSER_NO_SANDBOX=1' });
  process.exit(3);
}

// ---- the browser -------------------------------------------------------------

let profile = null; // temporary profile (and HOME) directory
let browser = null;
let child = null; // the browser's process
let cleaning = null;

function removeProfile() {
  if (!profile) return;
  try {
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  } catch (e) {
    process.stderr.write(`browser-drive.js: cannot remove ${profile}: ${errText(e)}\n`);
  }
  profile = null;
}

function running() {
  return child && child.exitCode === null && child.signalCode === null;
}

// killChild — SIGKILL the browser and its helpers (its process group:
// puppeteer starts it as a group leader)
function killChild() {
  if (!child) return;
  try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* no such group */ }
  if (running()) {
    try { child.kill('SIGKILL'); } catch (e) { /* gone already */ }
  }
}

function exited(ms) {
  if (!running()) return Promise.resolve();
  return withTimeout(new Promise(resolve => child.once('exit', resolve)), ms, 'exit').catch(() => {});
}

// cleanup — close the browser (kill it when that takes too long), wait for
// its process to be gone, remove the profile. Safe to call more than once.
function cleanup() {
  if (!cleaning) {
    cleaning = (async () => {
      if (browser) {
        try {
          await withTimeout(browser.close(), CLOSE_TIMEOUT, 'closing the browser');
        } catch (e) {
          killChild();
        }
      }
      await exited(5000);
      killChild(); // helpers that outlive the browser
      child = null;
      removeProfile();
    })();
  }
  return cleaning;
}

let stopping = null; // {sig, code} once a signal came
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = { sig, code };
    killChild();
    await exited(3000);
    child = null;
    removeProfile();
    process.exit(code);
  });
}
// a last resort when node exits some other way: no browser left behind
process.on('exit', () => {
  killChild();
  removeProfile();
});

async function launch() {
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rf-browser-'));
  const env = { ...process.env };
  // a uid without a (writable) home: chromium, fontconfig and the like
  // write under HOME and XDG directories; those are the profile's here
  env.HOME = profile;
  env.XDG_CONFIG_HOME = path.join(profile, '.config');
  env.XDG_CACHE_HOME = path.join(profile, '.cache');
  env.XDG_DATA_HOME = path.join(profile, '.local', 'share');
  env.TMPDIR = path.join(profile, 'tmp'); // its org.chromium.Chromium.* too
  fs.mkdirSync(env.TMPDIR);
  const args = ['--disable-gpu', '--no-first-run', '--no-default-browser-check'];
  if (NO_SANDBOX) args.push('--no-sandbox');
  const launching = puppeteer.launch({
    executablePath: chromiumPath,
    headless: true, // new headless (--headless=new)
    pipe: true,
    userDataDir: path.join(profile, 'profile'),
    args,
    env,
    timeout: LAUNCH_TIMEOUT,
    protocolTimeout: Math.max(STEP_DEFAULT, 30000) + 5000,
    defaultViewport: { width: 1280, height: 800 },
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  let late = false;
  // a launch that outlives its own timeout: close what it brings late
  launching.then(b => { if (late) b.close().catch(() => {}); }, () => {});
  try {
    browser = await withTimeout(launching, LAUNCH_TIMEOUT + 5000, 'launching the browser');
  } catch (e) {
    late = true;
    throw e;
  }
  child = browser.process();
}

// sandboxHint — why a launch failed, when this uid cannot create a user
// namespace: the sandbox of Debian's chromium (no setuid helper) needs one
function sandboxHint() {
  const r = require('child_process').spawnSync('unshare', ['--user', 'true'],
    { timeout: 5000, encoding: 'utf8' });
  if (r.status === 0) return '';
  const said = ((r.stderr || '').trim() || (r.error && r.error.message) || `exit ${r.status}`);
  return ` (this uid cannot create a user namespace, which chromium's sandbox needs: ${said};` +
    ' RF_BROWSER_NO_SANDBOX=1 runs it without)';
}

// ---- the page ----------------------------------------------------------------

const messages = [];

async function setupPage(page) {
  page.on('console', m => messages.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', e => messages.push({ type: 'pageerror', text: errText(e) }));
  await page.exposeFunction('__rfCspViolation', (directive, uri) => {
    messages.push({ type: 'csp', text: `${directive} blocked ${uri || '(inline)'}` });
  });
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', e => {
      // eslint-disable-next-line no-undef
      window.__rfCspViolation(e.effectiveDirective || e.violatedDirective, e.blockedURI);
    });
  });
}

// click — click CSS and wait for a navigation it starts within the window
async function click(page, css, ms) {
  const handle = await page.waitForSelector(css, { visible: true, timeout: ms });
  let started = false;
  const onRequest = req => {
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) started = true;
  };
  const onNavigated = frame => {
    if (frame === page.mainFrame()) started = true;
  };
  page.on('request', onRequest);
  page.on('framenavigated', onNavigated);
  const nav = page.waitForNavigation({ waitUntil: 'load', timeout: ms });
  nav.catch(() => {}); // abandoned when nothing navigates
  try {
    await handle.click();
    const until = Date.now() + NAV_START_WINDOW;
    while (!started && Date.now() < until) await sleep(25);
    if (!started) return { navigated: false, status: null };
    const resp = await nav;
    return { navigated: true, status: resp ? resp.status() : null };
  } finally {
    page.off('request', onRequest);
    page.off('framenavigated', onNavigated);
    await handle.dispose().catch(() => {});
  }
}

async function cookies(page) {
  // every cookie the browser holds (a path-scoped one too); older
  // puppeteer-core has only the page's (its URL's) cookies
  const list = typeof browser.cookies === 'function' ? await browser.cookies() : await page.cookies();
  return list.map(c => ({
    name: c.name,
    httpOnly: !!c.httpOnly,
    sameSite: c.sameSite || null,
    secure: !!c.secure,
    path: c.path,
  }));
}

async function runStep(page, s) {
  const wait = s.timeout || WAIT_DEFAULT;
  const ms = s.timeout || STEP_DEFAULT;
  if ('goto' in s) {
    const resp = await page.goto(s.goto, { waitUntil: 'load', timeout: ms });
    return resp ? resp.status() : null;
  }
  if ('waitFor' in s) {
    await page.waitForSelector(s.waitFor, { timeout: wait });
    return true;
  }
  if ('waitGone' in s) {
    await page.waitForSelector(s.waitGone, { hidden: true, timeout: wait });
    return true;
  }
  if ('text' in s) {
    return await page.evaluate(css => {
      const e = document.querySelector(css);
      return e ? e.textContent : null;
    }, s.text);
  }
  if ('texts' in s) {
    return await page.evaluate(css => Array.from(document.querySelectorAll(css), e => e.textContent), s.texts);
  }
  if ('count' in s) {
    return await page.evaluate(css => document.querySelectorAll(css).length, s.count);
  }
  if ('click' in s) return await click(page, s.click, ms);
  if ('attr' in s) {
    return await page.evaluate((css, name) => {
      const e = document.querySelector(css);
      return e ? e.getAttribute(name) : null;
    }, s.attr, s.name);
  }
  if ('type' in s) {
    await page.waitForSelector(s.type, { visible: true, timeout: wait });
    await page.$eval(s.type, e => {
      e.value = '';
      e.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.type(s.type, s.keys);
    return await page.$eval(s.type, e => e.value);
  }
  if ('select' in s) {
    await page.waitForSelector(s.select, { visible: true, timeout: wait });
    return await page.select(s.select, s.value);
  }
  if ('eval' in s) {
    const v = await page.evaluate(String(s.eval));
    return v === undefined ? null : v;
  }
  if ('screenshot' in s) {
    await page.screenshot({ path: s.screenshot, fullPage: !!s.fullPage, type: 'png' });
    return s.screenshot;
  }
  if ('cookies' in s) return await cookies(page);
  if ('console' in s) return messages.slice();
  if ('fetch' in s) {
    return await page.evaluate(async (url, method, body, headers, redirect) => {
      const r = await fetch(url, { method, body, headers, redirect, credentials: 'same-origin' });
      return { status: r.status };
    }, s.fetch, s.method || 'GET', s.body === undefined ? null : s.body, s.headers || {},
    s.redirect || 'follow');
  }
  throw new Error('unknown step');
}

async function main() {
  const t0 = Date.now();
  try {
    await launch();
  } catch (e) {
    // puppeteer's message runs over several lines (the browser's own words)
    let why = (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ').slice(0, 1500);
    if (!NO_SANDBOX) why += sandboxHint();
    emit({ step: 'launch', ok: false, error: why });
    return 3;
  }
  process.stderr.write(`browser-drive.js: ${await browser.version()} up in ${Date.now() - t0} ms` +
    `${NO_SANDBOX ? ' (no sandbox)' : ''}\n`);
  const page = await withTimeout(browser.newPage(), STEP_DEFAULT, 'opening a page');
  await setupPage(page);
  page.setDefaultTimeout(STEP_DEFAULT);
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const ms = (s.timeout || Math.max(STEP_DEFAULT, WAIT_DEFAULT)) + 2000;
    try {
      // the step bounds itself (ms); this bounds whatever it does not
      const value = await withTimeout(runStep(page, s), ms, `step ${i}`);
      emit({ step: i, ok: true, value });
    } catch (e) {
      emit({ step: i, ok: false, error: stopping ? `stopped by ${stopping.sig}` : errText(e) });
      return 1;
    }
  }
  return 0;
}

main()
  .catch(e => {
    emit({ step: 'setup', ok: false, error: errText(e) });
    return 1;
  })
  .then(async code => {
    await cleanup();
    process.exit(stopping ? stopping.code : code);
  });
