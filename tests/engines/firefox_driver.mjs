// Drives Debian's firefox-esr through WebDriver BiDi with puppeteer-core, for tests/engines/firefox.py.
//
// One request per stdin line, one answer per stdout line, both JSON:
//   {"id": 1, "cmd": "goto", "args": {...}}  ->  {"id": 1, "result": ...} or {"id": 1, "error": "..."}
// The first answer, with id 0 and no request, is {"id": 0, "result": {"version": "..."}} once
// the browser runs (or {"id": 0, "error": ...} if it cannot start). Closing stdin quits the browser.
// Commands (args): newPage {width, height} -> page id; goto {page, url}; evaluate {page, fn, args};
// waitFor {page, fn, args, timeoutMs}; click {page, selector}; press {page, key};
// type {page, text}; viewport {page, width, height}; screenshot {page, path}; errors {page};
// closePage {page}. Each page lives in its own browser context (fresh storage).
import readline from "node:readline";
import puppeteer from "puppeteer-core";

const executablePath = process.env.FIREFOX_BIN || "/usr/bin/firefox-esr";
const pages = new Map(); // id -> {page, context, errors}
let nextPage = 1;

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// `fn` is a function's source; it is called with `args` in the page (awaited if a promise).
function call(fn, args) {
  return `(${fn})(...${JSON.stringify(args ?? [])})`;
}

function entry(id) {
  const found = pages.get(id);
  if (!found) throw new Error(`no page ${id}`);
  return found;
}

let browser;
try {
  browser = await puppeteer.launch({
    browser: "firefox", executablePath, headless: true,
    extraPrefsFirefox: {"browser.shell.checkDefaultBrowser": false},
  });
  send({id: 0, result: {version: await browser.version()}});
} catch (error) {
  send({id: 0, error: String(error && error.stack || error)});
  process.exit(1);
}

const commands = {
  async newPage({width, height}) {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const errors = [];
    page.on("console", message => {
      if (message.type() === "error") errors.push(`console: ${message.text()}`);
    });
    page.on("pageerror", error => errors.push(`uncaught: ${error && error.message || error}`));
    await page.setViewport({width, height});
    const id = nextPage++;
    pages.set(id, {page, context, errors});
    return id;
  },
  async goto({page, url}) {
    const found = entry(page);
    found.errors.length = 0;
    await found.page.goto(url, {waitUntil: "load", timeout: 120_000});
    return null;
  },
  async evaluate({page, fn, args}) {
    return await entry(page).page.evaluate(call(fn, args));
  },
  async waitFor({page, fn, args, timeoutMs}) {
    const handle = await entry(page).page.waitForFunction(call(fn, args), {polling: 200, timeout: timeoutMs});
    const value = await handle.jsonValue();
    await handle.dispose();
    return value;
  },
  async click({page, selector}) {
    await entry(page).page.click(selector);
    return null;
  },
  async press({page, key}) {  // one key, or a chord such as "Control+A"
    const keyboard = entry(page).page.keyboard;
    const parts = key.length > 1 ? key.split("+") : [key];
    const last = parts.pop();
    for (const modifier of parts) await keyboard.down(modifier);
    await keyboard.press(parts.length && last.length === 1 ? last.toLowerCase() : last);
    for (const modifier of parts.reverse()) await keyboard.up(modifier);
    return null;
  },
  async type({page, text}) {
    await entry(page).page.keyboard.type(text);
    return null;
  },
  async viewport({page, width, height}) {
    await entry(page).page.setViewport({width, height});
    return null;
  },
  async screenshot({page, path}) {
    await entry(page).page.screenshot({path});
    return null;
  },
  async errors({page}) {
    return [...entry(page).errors];
  },
  async closePage({page}) {
    const found = entry(page);
    pages.delete(page);
    await found.context.close();
    return null;
  },
};

const lines = readline.createInterface({input: process.stdin});
lines.on("line", async line => {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    send({id: null, error: `not JSON: ${line}`});
    return;
  }
  const command = commands[request.cmd];
  if (!command) {
    send({id: request.id, error: `unknown command ${request.cmd}`});
    return;
  }
  try {
    const result = await command(request.args || {});
    send({id: request.id, result: result === undefined ? null : result});
  } catch (error) {
    send({id: request.id, error: String(error && error.message || error)});
  }
});
lines.on("close", async () => {
  await browser.close().catch(() => {});
  process.exit(0);
});
