// Opens a skinsolve HTML report in headless Chromium (playwright-core,
// Debian's /usr/bin/chromium, WebGL on the CPU through SwiftShader), waits
// for the first frame, takes screenshots and checks what a person would:
//   - the page makes no network request and the canvas is not blank;
//   - the mean / worst error shown for frame k equal the CLI's --json
//     frame_mean_error_pct[k] / frame_worst_error_pct[k] (to display precision);
//   - --imperfect: the heatmap shows blue and non-blue pixels;
//   - --control: every embedded vertex error is under 0.1% of D and the
//     rendered target is blue only;
//   - the worst-joints lists show the embedded diagnosis, equal to the
//     CLI's --json "joints" (name, share), shares summing to 100 %; "colour
//     by: dominant joint" repaints the baked panels in several joint hues
//     (differing from the heatmap), and back.
// Pixels are read back from the screenshot PNGs (decoded by the browser on a
// blank page), not from the viewer's own code.
//
// usage: node report_check.mjs --html R.html --json CLI.json --screens DIR
//                              --name NAME (--imperfect | --control) [--decimated]
// --decimated: the viewer's mesh is simplified (over the size budget): the
// page says so (a visible note naming the shown and total vertex counts)
// and the mesh embedded is smaller than the target's.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

function parseArgs(argv) {
  const out = { imperfect: false, control: false };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === "--imperfect") out.imperfect = true;
    else if (a === "--decimated") out.decimated = true;
    else if (a === "--control") out.control = true;
    else if (a.startsWith("--")) {
      out[a.slice(2)] = argv[i + 1];
      i += 1;
    }
  }
  for (const k of ["html", "json", "screens", "name"]) {
    if (!out[k]) throw new Error(`missing --${k}`);
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
let failures = 0;
let passes = 0;
function check(cond, message) {
  if (cond) {
    passes += 1;
  } else {
    failures += 1;
    console.error(`FAIL: ${message}`);
  }
}

// ---- the embedded data, decoded independently of the viewer ---------------

function embeddedData(html) {
  const m = html.match(/<script type="application\/json" id="sks-data">([\s\S]*?)<\/script>/);
  if (!m) throw new Error("no embedded data block");
  return JSON.parse(m[1]);
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

function maxVertexErrorPct(bake) {
  const buf = Buffer.from(bake.vertex_error, "base64");
  const u16 = new Uint16Array(buf.buffer, buf.byteOffset, buf.length / 2);
  let max = 0;
  for (const h of u16) {
    const v = halfToFloat(h);
    if (!(v <= max)) max = v;
  }
  return max;
}

// Decimal places of a displayed number ("0.0123 %" -> 4).
function decimals(text) {
  const m = text.match(/-?\d+(?:\.(\d+))?/);
  return m && m[1] ? m[1].length : 0;
}

// The simplified-mesh note (README "Report budget"): visible, with the
// vertex counts of the data, when the report decimated vertices; absent
// otherwise.
async function checkDecimationNote(page, data) {
  const note = await page.evaluate(() => {
    const n = document.getElementById("vertex-decimation");
    if (!n) return null;
    const r = n.getBoundingClientRect();
    return { text: n.textContent, visible: r.width > 0 && r.height > 0, shown: Number(n.dataset.vertices),
      total: Number(n.dataset.sourceVertices) };
  });
  if (args.decimated) {
    check(note !== null && note.visible, "simplified viewer mesh: no visible note on the page");
    if (note) {
      check(note.shown === data.mesh.vertex_count && note.total === data.mesh.source_vertex_count &&
        note.shown < note.total, `note says ${note.shown} of ${note.total} vertices, data ${data.mesh.vertex_count}`);
      check(note.text.includes(`${note.shown} of the ${note.total} vertices`), `note text: ${note.text}`);
      console.log(`${args.name}: the page says: ${note.text.slice(0, 160)}...`);
    }
  } else {
    check(note === null && data.mesh.vertex_count === (data.mesh.source_vertex_count ?? data.mesh.vertex_count),
      "a simplified mesh where none was expected");
  }
}

// ---- pixels ---------------------------------------------------------------

// Classifies pixels of PNG screenshots in a blank page (the browser decodes
// the PNG). Background is the viewer's light grey; "saturated" pixels are
// heatmap colours: blue = hue 200..260 deg, non-blue = hue outside 185..275.
async function pixelStats(page, pngs) {
  return page.evaluate(async (list) => {
    const results = [];
    for (const b64 of list) {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      const s = { total: c.width * c.height, background: 0, dark: 0, neutral: 0, blue: 0, nonBlue: 0, other: 0,
        hues: new Array(36).fill(0) };
      for (let i = 0; i < px.length; i += 4) {
        const r = px[i];
        const g = px[i + 1];
        const b = px[i + 2];
        const max = Math.max(r, g, b);
        const min = Math.min(r, g, b);
        if (Math.abs(r - 238) <= 6 && Math.abs(g - 241) <= 6 && Math.abs(b - 244) <= 6) { s.background += 1; continue; }
        if (max - min < 40) {
          if (max < 90) s.dark += 1; else s.neutral += 1;
          continue;
        }
        let h;
        if (max === r) h = (60 * (g - b)) / (max - min);
        else if (max === g) h = 120 + (60 * (b - r)) / (max - min);
        else h = 240 + (60 * (r - g)) / (max - min);
        if (h < 0) h += 360;
        s.hues[Math.min(35, Math.floor(h / 10))] += 1;
        if (h >= 200 && h <= 260) s.blue += 1;
        else if (h < 185 || h > 275) s.nonBlue += 1;
        else s.other += 1;
      }
      results.push(s);
    }
    return results;
  }, pngs.map((p) => p.toString("base64")));
}

// ---- run ------------------------------------------------------------------

const html = fs.readFileSync(args.html, "utf8");
const data = embeddedData(html);
const cli = JSON.parse(fs.readFileSync(args.json, "utf8"));
fs.mkdirSync(args.screens, { recursive: true });
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sks-chromium-"));

// --user-data-dir=<tmp> is how Playwright's persistent context launches Chromium.
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.SKS_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
    "--disable-component-update", "--disable-sync", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"],
  viewport: { width: 1400, height: 1000 },
  deviceScaleFactor: 1
});
try {
  const page = await context.newPage();
  const requests = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
    requests.push(url);
    return route.abort();
  });
  const consoleErrors = [];
  page.on("console", (msg) => { if (msg.type() === "error") consoleErrors.push(msg.text()); });
  page.on("pageerror", (err) => consoleErrors.push(String(err)));

  const t0 = Date.now();
  await page.goto(pathToFileURL(path.resolve(args.html)).href);
  await page.waitForFunction(() => document.body.dataset.ready !== undefined, null, { timeout: 120000 });
  const ready = await page.evaluate(() => document.body.dataset.ready);
  check(ready === "1", `viewer not ready: data-ready="${ready}" (${consoleErrors.join("; ")})`);
  console.log(`${args.name}: ready after ${Date.now() - t0} ms`);
  await page.evaluate(() => window.sksReport.pause());
  await checkDecimationNote(page, data);

  const viewer = page.locator("#viewport");
  const canvasBox = await page.locator("#view-canvas").boundingBox();
  const clipCount = data.clips.length;
  const resultCount = data.results.length;
  // The heatmap must show blue and non-blue on the clip with the largest
  // worst error (at its worst frame); other clips only need a drawn canvas.
  let telling = 0;
  let tellingWorst = -1;
  data.clips.forEach((c, i) => c.baked.forEach((b) => {
    if (b && b.worst_error_pct > tellingWorst) { tellingWorst = b.worst_error_pct; telling = i; }
  }));

  for (let ci = 0; ci < clipCount; ci += 1) {
    const clip = data.clips[ci];
    await page.evaluate((i) => window.sksReport.setClip(i), ci);
    for (let r = 0; r < resultCount; r += 1) {
      const bake = clip.baked[r];
      if (!bake) continue;
      const mode = data.results[r].mode;
      const ref = cli.clips.find((c) => c.name === clip.name && (c.mode === undefined || c.mode === mode));
      check(ref !== undefined, `CLI JSON has no clip '${clip.name}' (${mode})`);
      if (!ref) continue;
      // Over its size budget the report shows every step-th frame: view
      // frame k is clip frame k * step, and the CLI has all of them.
      const step = clip.frame_step || 1;
      const total = clip.source_frame_count || clip.frame_count;
      check(clip.frame_count === Math.ceil(total / step), `'${clip.name}': ${clip.frame_count} frames shown of ${total} at step ${step}`);
      check(Array.isArray(ref.frame_mean_error_pct) && ref.frame_mean_error_pct.length === total,
        `CLI JSON '${clip.name}' frame_mean_error_pct has ${ref.frame_mean_error_pct?.length} frames, report ${total}`);
      await page.evaluate((i) => window.sksReport.setResult(i), r);
      // Every frame: the numbers shown equal the CLI's.
      for (let k = 0; k < clip.frame_count; k += 1) {
        // setFrame updates the DOM synchronously (and draws); read it at once.
        const shown = await page.evaluate((f) => {
          window.sksReport.setFrame(f);
          return {
            mean: document.getElementById("frame-mean-error").textContent,
            worst: document.getElementById("frame-worst-error").textContent,
            counter: document.getElementById("frame-counter").textContent
          };
        }, k);
        for (const [key, text] of [["mean", shown.mean], ["worst", shown.worst]]) {
          const want = ref[`frame_${key}_error_pct`][k * step];
          const got = parseFloat(text);
          const tol = 0.5 * 10 ** -decimals(text) * 1.0001 + Math.abs(want) * 1e-6;
          check(Math.abs(got - want) <= tol,
            `${clip.name} (${mode}) frame ${k}: shown ${key} "${text}" vs CLI ${want}`);
        }
        check(shown.counter.startsWith(`frame ${k * step + 1} / ${total}`), `frame counter "${shown.counter}"`);
      }
      console.log(`${args.name}: ${clip.name} (${mode}): ${clip.frame_count} of ${total} frames shown (every ${step}), ` +
        "shown mean/worst match the CLI JSON");
      if (args.control) {
        const maxPct = maxVertexErrorPct(bake);
        check(maxPct < 0.1, `control ${clip.name}: embedded vertex error reaches ${maxPct}% of D`);
        console.log(`${args.name}: ${clip.name}: largest embedded vertex error ${maxPct.toExponential(3)} % of D`);
      }
    }

    // Screenshot at the frame with the largest worst error (the most telling).
    const b0 = clip.baked.find((b) => b);
    let kWorst = 0;
    b0.frame_worst_error_pct.forEach((v, k) => { if (v > b0.frame_worst_error_pct[kWorst]) kWorst = k; });
    await page.evaluate((f) => window.sksReport.setFrame(f), kWorst);
    const safeName = clip.name.replace(/[^A-Za-z0-9_.-]+/g, "_");
    const shot = path.join(args.screens, `${args.name}_${ci}_${safeName}.png`);
    await viewer.screenshot({ path: shot });
    const panels = await page.evaluate(() => window.sksReport.panels());
    const pngs = [];
    for (const p of panels) {
      // Inset: leave the panel label (top left) out of the pixel count.
      pngs.push(await page.screenshot({
        clip: { x: canvasBox.x + p.x + 2, y: canvasBox.y + 48, width: p.width - 4, height: p.height - 52 }
      }));
    }
    const stats = await pixelStats(page, pngs);
    stats.forEach((s, i) => {
      const drawn = s.total - s.background;
      console.log(`${args.name}: ${clip.name} frame ${kWorst} panel ${i} '${panels[i].title}': ` +
        `drawn ${(100 * drawn / s.total).toFixed(1)}%, blue ${s.blue}, non-blue ${s.nonBlue}, ` +
        `dark ${s.dark}, neutral ${s.neutral}, other ${s.other}`);
      check(drawn > s.total * 0.01, `${clip.name} panel ${i}: canvas blank (${drawn} drawn pixels)`);
      if (i === 0) return;
      if (!clip.baked[i - 1]) return;
      if (args.imperfect && ci === telling) {
        check(s.blue > 50 && s.nonBlue > 50,
          `${clip.name} panel ${i}: heatmap should show blue and non-blue (blue ${s.blue}, non-blue ${s.nonBlue})`);
      }
      if (args.control) {
        check(s.blue > 500, `${clip.name} panel ${i}: control mesh not drawn blue (blue ${s.blue})`);
        check(s.nonBlue === 0 && s.other <= s.blue * 0.002,
          `${clip.name} panel ${i}: control mesh must be all blue (non-blue ${s.nonBlue}, other ${s.other})`);
      }
    });
    console.log(`${args.name}: screenshot ${shot}`);
  }

  // Diagnosis: the worst-joints lists and the dominant-joint view.
  for (let ci = 0; ci < clipCount; ci += 1) {
    const clip = data.clips[ci];
    for (let r = 0; r < resultCount; r += 1) {
      const bake = clip.baked[r];
      if (!bake) continue;
      const mode = data.results[r].mode;
      const label = `${clip.name} (${mode})`;
      const ref = cli.clips.find((c) => c.name === clip.name && (c.mode === undefined || c.mode === mode));
      check(Array.isArray(bake.joints) && bake.joints.length > 0, `${label}: no embedded joints diagnosis`);
      if (!Array.isArray(bake.joints) || !bake.joints.length) continue;
      const total = bake.joints.reduce((a, j) => a + j.share_pct, 0) + bake.unattributed_share_pct;
      check(Math.abs(total - 100) < 1e-6, `${label}: embedded shares sum to ${total} %`);
      const rows = await page.evaluate(([c, rr]) => {
        const t = document.querySelector(`table.joints[data-clip="${c}"][data-result="${rr}"]`);
        if (!t) return null;
        return [...t.querySelectorAll("tbody tr")].map((tr) => ({
          joint: Number(tr.dataset.joint),
          name: tr.cells[0].textContent,
          share: Number(tr.cells[2].dataset.value),
          swatch: getComputedStyle(tr.querySelector(".joint-swatch")).backgroundColor
        }));
      }, [ci, r]);
      check(rows !== null, `${label}: no worst-joints list on the page`);
      if (!rows) continue;
      check(rows.length === Math.min(8, bake.joints.length), `${label}: ${rows.length} joint rows`);
      rows.forEach((row, k) => {
        const j = bake.joints[k];
        check(row.joint === j.joint && row.name === data.mesh.joint_names[j.joint] &&
          Math.abs(row.share - j.share_pct) <= 1e-9 * Math.max(1, j.share_pct),
        `${label} row ${k}: shows ${row.name} ${row.share} %, data ${data.mesh.joint_names[j.joint]} ${j.share_pct} %`);
      });
      check(Array.isArray(ref?.joints) && ref.joints.length === bake.joints.length,
        `${label}: CLI JSON joints ${ref?.joints?.length} vs report ${bake.joints.length}`);
      if (Array.isArray(ref?.joints) && ref.joints.length) {
        const a = ref.joints[0];
        const b = bake.joints[0];
        check(a.joint === undefined || a.joint === b.joint, `${label}: worst joint ${a.joint} (CLI) vs ${b.joint}`);
        check(a.name === undefined || a.name === rows[0].name, `${label}: worst joint ${a.name} (CLI) vs ${rows[0].name}`);
        check(Math.abs(a.share_pct - b.share_pct) <= 1e-9 * Math.max(1, b.share_pct),
          `${label}: worst share ${a.share_pct} (CLI) vs ${b.share_pct}`);
      }
      console.log(`${args.name}: ${label}: worst joint ${rows[0].name} ${rows[0].share.toFixed(2)} %, list matches the data and the CLI JSON`);
    }
  }
  {
    // The telling clip at its worst frame: heatmap, then dominant joints, then back.
    await page.evaluate((i) => window.sksReport.setClip(i), telling);
    const b0 = data.clips[telling].baked.find((b) => b);
    let kWorst = 0;
    b0.frame_worst_error_pct.forEach((v, k) => { if (v > b0.frame_worst_error_pct[kWorst]) kWorst = k; });
    await page.evaluate((f) => window.sksReport.setFrame(f), kWorst);
    const panels = await page.evaluate(() => window.sksReport.panels());
    const p = panels[1];
    const region = { x: canvasBox.x + p.x + 2, y: canvasBox.y + 48, width: p.width - 4, height: p.height - 52 };
    const heat = await page.screenshot({ clip: region });
    await page.selectOption("#color-select", "joint");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const st = await page.evaluate(() => ({ ...window.sksReport.state(),
      legend: !document.getElementById("joint-legend").hidden }));
    check(st.colorBy === "joint" && st.legend, `colour-by selector: state ${st.colorBy}, legend shown ${st.legend}`);
    const joint = await page.screenshot({ clip: region });
    await viewer.screenshot({ path: path.join(args.screens, `${args.name}_joints.png`) });
    const [hs, js] = await pixelStats(page, [heat, joint]);
    const saturated = js.blue + js.nonBlue + js.other;
    const hues = js.hues.filter((n) => n > saturated * 0.01).length;
    const distinct = new Set(data.clips[telling].baked.filter((b) => b)
      .flatMap((b) => b.joints.map((j) => j.joint))).size;
    console.log(`${args.name}: dominant-joint view: ${saturated} saturated pixels in ${hues} hue bins ` +
      `(${distinct} dominating joints); heatmap non-blue ${hs.nonBlue}, joint view non-blue ${js.nonBlue}`);
    check(!heat.equals(joint), "dominant-joint view draws the same picture as the heatmap");
    check(saturated > (js.total - js.background) * 0.5, `dominant-joint view: only ${saturated} coloured pixels`);
    check(hues >= Math.min(3, distinct), `dominant-joint view: ${hues} hue bins for ${distinct} joints`);
    await page.evaluate(() => window.sksReport.setColorBy("error"));
    const back = await page.screenshot({ clip: region });
    const [bs] = await pixelStats(page, [back]);
    check(Math.abs(bs.blue - hs.blue) <= hs.total * 0.01 && Math.abs(bs.nonBlue - hs.nonBlue) <= hs.total * 0.01,
      `back to the heatmap: blue ${bs.blue} / ${hs.blue}, non-blue ${bs.nonBlue} / ${hs.nonBlue}`);
  }

  // The controls a person uses: drag orbits, wheel zooms, Play advances frames.
  await page.evaluate(() => window.sksReport.setClip(0));
  const before = await viewer.screenshot();
  const cx = canvasBox.x + canvasBox.width * 0.75;
  const cy = canvasBox.y + canvasBox.height * 0.5;
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx + 120, cy + 30, { steps: 6 });
  await page.mouse.up();
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const dragged = await viewer.screenshot();
  check(!before.equals(dragged), "mouse drag did not change the view (orbit camera)");
  await page.mouse.wheel(0, 400);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const zoomed = await viewer.screenshot();
  check(!dragged.equals(zoomed), "mouse wheel did not change the view (zoom)");
  if (data.clips[0].frame_count > 2) {
    await page.click("#play-button");
    // the state that showed an advanced frame, read in the same poll (the
    // clip loops: a second read can land on frame 0 again on a slow machine)
    const st = await page.waitForFunction(() => {
      const s = window.sksReport.state();
      return s.frame > 0 ? s : null;
    }, null, { timeout: 20000 })
      .then((h) => h.jsonValue())
      .catch(() => page.evaluate(() => window.sksReport.state()));
    check(st.playing && st.frame > 0, `Play did not advance the frame (${JSON.stringify(st)})`);
    await page.evaluate(() => window.sksReport.pause());
  await checkDecimationNote(page, data);
  }
  await page.selectOption("#clip-select", String(clipCount - 1));
  const picked = await page.evaluate(() => window.sksReport.state().clip);
  check(picked === clipCount - 1, `clip selector: state says clip ${picked}`);

  // The whole page once (table, plots), and a view from another angle.
  await page.evaluate(() => window.sksReport.setClip(0));
  await page.evaluate(() => window.sksReport.setView(0.6, 0.18, 1));
  await page.screenshot({ path: path.join(args.screens, `${args.name}_page.png`), fullPage: true });
  await page.evaluate(() => window.sksReport.setView(-0.9, 0.45, 0.9));
  await viewer.screenshot({ path: path.join(args.screens, `${args.name}_orbit.png`) });

  check(requests.length === 0, `page requested the network: ${requests.join(", ")}`);
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join("; ")}`);
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}

console.log(`${args.name}: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
