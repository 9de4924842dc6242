// The box's page: pair once, then four views — Rehearse (the score with a
// cursor that follows the audio: the box's song sample, moved on by the
// page's clock between messages and corrected by each; the lyric syllable
// lit; the needle; the transport in reach — fixed to the bottom of a phone,
// in a column beside the score on anything wider — with the settings
// under More; review as a sheet; measures tapped or dragged for the loop
// or punch range), Takes, Library and Export.
"use strict";
let csrf = null;
let timeMap = null;
let live = null;
let receivedAt = 0;
let shownSong = null;
// The score's version as loaded: the box engraves a song after loading it
// and counts this up when the score is ready.
let shownScore = null;
let syllables = [];
let sampleRate = 48000;
let saidAt = -1e9;
const $ = (id) => document.getElementById(id);

async function start() {
  const response = await fetch("/api/state");
  if (response.status === 401) { $("pair").hidden = false; return; }
  const state = await response.json();
  csrf = state.csrf || null;
  shownScore = state.scoreVersion;
  startVersions = state.scoreVersions || {};
  await begin(state.song);
}

// Paired (or a guest): the score of `song`, then the live state.
async function begin(song) {
  shownSong = song;
  $("tabs").hidden = csrf === null;
  $("controls").hidden = csrf === null;
  document.body.classList.toggle("paired", csrf !== null);
  measureChrome();
  showZoom();  // the score's column is narrower once the controls show
  await loadScore();
  listen();
  if (csrf !== null) { loadTakes(); loadLibrary(); }
}

$("pair-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/api/pair", { method: "POST", body: $("code").value });
  const reply = await response.json();
  if (!response.ok) { $("pair-error").textContent = reply.error; return; }
  csrf = reply.csrf;
  $("pair").hidden = true;
  const state = await (await fetch("/api/state")).json();
  shownScore = state.scoreVersion;
  startVersions = state.scoreVersions || {};
  await begin(state.song);
});

// A change: POSTed with the CSRF token; what the box said is shown.
async function post(path, body, headers) {
  const response = await fetch(path, { method: "POST", headers: Object.assign({ "X-CSRF-Token": csrf }, headers || {}), body: body });
  // Signed out (from this phone, or every phone from another): pair again.
  if (response.status === 401) { location.reload(); return { ok: false, reply: {} }; }
  let reply = {};
  try { reply = await response.json(); } catch (error) { reply = { error: response.statusText }; }
  // An action's own answer is what the box then says (its message line).
  if (path !== "/api/action" || !response.ok) say(response.ok ? (reply.done || "") : reply.error, !response.ok);
  // A take chosen from another project's list: the list of the one open now.
  if (response.status === 409 && path.startsWith("/api/take/")) loadTakes();
  return { ok: response.ok, reply: reply };
}

// The message line: what the page or the box last said, cleared when stale.
let saidText = "";
function say(text, error) {
  $("said").textContent = text;
  $("said").className = error ? "error" : "";
  saidAt = performance.now();
  saidText = text;
}
setInterval(() => { if (performance.now() - saidAt > 8000 && $("said").textContent) $("said").textContent = ""; }, 1000);

$("tabs").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-tab]");
  if (!button) return;
  for (const tab of document.querySelectorAll("#tabs button")) {
    tab.classList.toggle("on", tab === button);
    $(tab.dataset.tab).hidden = tab !== button;
  }
});

$("controls").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || csrf === null) return;
  // Play from the page: the cursor is followed again.
  if (button.dataset.action === "play-pause" || button.dataset.action === "record") follow(true);
  await post("/api/action", button.dataset.action);
});

$("more-button").addEventListener("click", () => {
  const more = $("more");
  more.hidden = !more.hidden;
  $("more-button").setAttribute("aria-expanded", String(!more.hidden));
  measureChrome();
});

$("calibrate").addEventListener("click", () => {
  if (confirm("Calibrate: connect the box's output to its input (a cable, or headphones held to the microphone), then OK. The box measures its round trip and carries on.")) {
    post("/api/action", "calibrate");
  }
});

// The header's and the phone bar's heights, for what sits below and above them.
function measureChrome() {
  const root = document.documentElement.style;
  root.setProperty("--header", $("top").getBoundingClientRect().height + "px");
  if (!$("controls").hidden) root.setProperty("--bar-height", $("controls").getBoundingClientRect().height + "px");
}
if (window.ResizeObserver) {
  const observer = new ResizeObserver(measureChrome);
  observer.observe($("top"));
  observer.observe($("controls"));
}

// Pairing lasts across the box's restarts; a phone signs itself out here,
// or every phone at once (the box then shows a new code).
$("sign-out").addEventListener("click", async () => {
  if ((await post("/api/sign-out", "")).ok) location.reload();
});
$("sign-out-everyone").addEventListener("click", async () => {
  if (!confirm("Sign out every phone paired with the box? The box shows a new code to pair again.")) return;
  if ((await post("/api/sign-out-everyone", "")).ok) location.reload();
});

$("clear-ranges").addEventListener("click", async () => {
  await post("/api/loop", "off");
  await post("/api/punch", "off");
});

// A narrow score (a phone upright, a tablet upright beside the controls)
// reads the narrow engraving (fewer, larger measures a line). Smaller and
// Larger step through the sizes the box engraves (a narrower engraving,
// scaled to the same screen, reads larger), kept in this browser; the
// cursor carries on in the new one. A size not engraved yet keeps the
// one shown until the box says it is ready.
// The browser's storage, when it allows it (else kept for this visit only).
const stored = (key) => { try { return localStorage.getItem(key); } catch (error) { return null; } };
const store = (key, value) => { try { localStorage.setItem(key, value); } catch (error) { /* this visit only */ } };
const isNarrow = () => $("score").clientWidth < 700;
const sizes = ["wide", "medium", "narrow", "large"];
// Steps from the size that fits this screen (kept as asked; the screen may change).
let zoom = Number(stored("acapella-zoom")) || 0;
const baseSize = () => (isNarrow() ? 2 : 0);
const shownIndex = () => Math.max(0, Math.min(sizes.length - 1, baseSize() + zoom));
const scoreSize = () => sizes[shownIndex()];
let size = scoreSize();
function showZoom() {
  const steps = shownIndex() - baseSize();
  $("zoom-value").textContent = steps === 0 ? "fits the screen" : Math.abs(steps) + (steps > 0 ? " larger" : " smaller");
  $("zoom-in").disabled = shownIndex() >= sizes.length - 1;
  $("zoom-out").disabled = shownIndex() <= 0;
}
window.addEventListener("resize", () => {
  measureChrome();
  turnedTo = null;  // turn to the cursor again on the new screen
  showZoom();
  if (scoreSize() !== size) loadScore();
});
function zoomBy(step) {
  zoom = Math.max(0, Math.min(sizes.length - 1, shownIndex() + step)) - baseSize();
  store("acapella-zoom", String(zoom));
  showZoom();
  if (scoreSize() !== size) loadScore();
}
$("zoom-in").addEventListener("click", () => zoomBy(1));
$("zoom-out").addEventListener("click", () => zoomBy(-1));
showZoom();
// Two fingers on the score: spread a third apart, a step larger; pinched
// a third together, a step smaller (the page itself never zooms: the
// controls stay where a thumb finds them).
let pinch = null;
const spread = (touches) => Math.hypot(touches[0].clientX - touches[1].clientX, touches[0].clientY - touches[1].clientY);
$("score").addEventListener("touchstart", (event) => { if (event.touches.length === 2) pinch = { from: spread(event.touches), to: spread(event.touches) }; },
  { passive: true });
$("score").addEventListener("touchmove", (event) => { if (pinch && event.touches.length === 2) pinch.to = spread(event.touches); }, { passive: true });
$("score").addEventListener("touchend", () => {
  if (!pinch) return;
  const ratio = pinch.to / Math.max(1, pinch.from);
  pinch = null;
  if (ratio > 1.33) zoomBy(1); else if (ratio < 0.75) zoomBy(-1);
});
$("score").addEventListener("touchcancel", () => { pinch = null; });

// Page turns (for a music stand): the view holds still and turns at once
// when the line being sung is the last one wholly in view, that line to
// the top, instead of scrolling to each line. Kept in this browser.
let pageTurns = stored("acapella-page-turns") === "1";
function showPageTurns() { $("page-turns").setAttribute("aria-pressed", String(pageTurns)); }
$("page-turns").addEventListener("click", () => {
  pageTurns = !pageTurns;
  store("acapella-page-turns", pageTurns ? "1" : "0");
  showPageTurns();
  turnedTo = null;
});
showPageTurns();

// The version of the score shown (its size's, from the live state, or the
// state the page started from before any live one came).
// Only the latest call shows what it fetched (taps, a pinch, a new
// engraving may start several); a size not engraved yet is asked again
// only once the box has a new version of it.
let loadedVersion = null;
let startVersions = {};
let loadTicket = 0;
let missing = null;
async function loadScore() {
  const wanted = scoreSize();
  const version = ((live ? live.scoreVersions : startVersions) || {})[wanted];
  if (missing && missing.size === wanted && missing.version === version && missing.song === shownSong) return;
  const ticket = ++loadTicket;
  const suffix = wanted === "wide" ? "" : "-" + wanted;
  const [svg, map] = await Promise.all([fetch("/score" + suffix + ".svg"), fetch("/timemap" + suffix + ".json")]);
  if (ticket !== loadTicket) return;
  if (!svg.ok || !map.ok) { missing = { size: wanted, version: version, song: shownSong }; return; }
  const [text, times] = await Promise.all([svg.text(), map.json()]);
  if (ticket !== loadTicket) return;
  missing = null;
  size = wanted;
  loadedVersion = version;
  const holder = $("score");
  holder.innerHTML = text;
  holder.dataset.size = wanted;
  timeMap = times;
  turnedTo = null;
  // Named for a screen reader: the song and the part sung.
  const drawn = holder.querySelector("svg");
  if (drawn) {
    drawn.setAttribute("role", "img");
    drawn.setAttribute("aria-label", "The score of " + ($("song").textContent || "the song") + (live && live.part ? ", " + live.part + " in colour" : ""));
  }
  // The score's first paint (after this frame is drawn), for acapella-bench web.
  requestAnimationFrame(() => setTimeout(() => performance.mark("score-painted"), 0));
  const cursor = document.createElement("div");
  cursor.id = "cursor";
  holder.appendChild(cursor);
  const selection = document.createElement("div");
  selection.id = "selection";
  holder.appendChild(selection);
  syllables = [];
  shaded = null;
  showRanges();
  if (csrf !== null) { loadAnalysis(); loadBlend(); }
}

// MARK: how the last take was sung: noteheads coloured, ranges to punch.

async function loadAnalysis() {
  const panel = $("analysis");
  const response = await fetch("/api/analysis");
  for (const note of document.querySelectorAll("#score g.note[class*=acc-]")) note.classList.remove("acc-good", "acc-near", "acc-far", "acc-missed");
  if (!response.ok) { panel.hidden = true; return; }
  const analysis = await response.json();
  for (const note of analysis.notes) {
    const group = document.getElementById(note.id);
    if (!group) continue;
    if (note.judged === false) continue;  // the recording lost audio there: not judged
    group.classList.add(!note.sung ? "acc-missed" : note.score >= 85 ? "acc-good" : note.score >= 60 ? "acc-near" : "acc-far");
  }
  panel.hidden = false;
  $("analysis-summary").textContent = "take " + analysis.take + " (" + analysis.part + "): " + Math.round(analysis.score) + "/100";
  const list = $("analysis-punch");
  list.innerHTML = "";
  if (analysis.punch.length === 0) list.textContent = " — nothing to punch in";
  for (const range of analysis.punch) {
    const button = document.createElement("button");
    button.textContent = "punch mm. " + range[0] + "-" + range[1];
    button.addEventListener("click", () => post("/api/punch", range[0] + "-" + range[1]));
    list.appendChild(button);
  }
  // Notes sung off pitch put right as a new take (the take as sung stays):
  // every measure to punch that has one, and all of them at once.
  const off = analysis.notes.filter((note) => note.sung && note.judged !== false && Math.abs(note.cents || 0) >= 15);
  const tune = $("analysis-tune");
  tune.innerHTML = "";
  const offer = (label, body) => {
    const button = document.createElement("button");
    button.textContent = label;
    button.addEventListener("click", () => post("/api/take/" + analysis.take + "/correct", body));
    tune.appendChild(button);
  };
  for (const range of analysis.punch) {
    if (off.some((note) => note.measure >= range[0] && note.measure <= range[1])) offer("put mm. " + range[0] + "-" + range[1] + " in tune", range[0] + "-" + range[1]);
  }
  if (off.length > 0) offer("put the " + off.length + " note" + (off.length === 1 ? "" : "s") + " off pitch in tune", "flagged");
}

// MARK: how the parts sang together: each chord's notes coloured on the
// score by the interval each sang above the chord's bass (equal temperament:
// within 10 cents in tune, within 25 near), what a director would say above.

function clearBlend() {
  for (const note of document.querySelectorAll("#score g.note[class*=tog-]")) {
    note.classList.remove("tog-in", "tog-near", "tog-off", "tog-bass");
    for (const title of note.querySelectorAll("title.tog")) title.remove();
  }
}

let blendLoads = 0;
async function loadBlend() {
  const panel = $("together-view");
  const load = ++blendLoads;  // the newest load wins (an event and a new score at once)
  $("together-ask").disabled = false;
  const response = await fetch("/api/blend");
  let blend = null;
  try { blend = response.ok ? await response.json() : null; } catch (error) { blend = { error: "the box sent something unreadable" }; }
  if (load !== blendLoads) return;
  clearBlend();
  if (!blend) { panel.hidden = true; return; }
  panel.hidden = false;
  const list = $("together-lines");
  list.innerHTML = "";
  if (blend.error) { $("together-summary").textContent = blend.error; return; }
  for (const chord of blend.chords) {
    for (const [part, id] of Object.entries(chord.notes || {})) {
      const group = document.getElementById(id);
      const off = chord.againstEqual[part];
      if (!group) continue;
      const bass = part === chord.bass || typeof off !== "number";
      // A note held under several chords: coloured by the worst of them.
      const rank = ["tog-bass", "tog-in", "tog-near", "tog-off"];
      const was = rank.findIndex((name) => group.classList.contains(name));
      const now = bass ? 0 : Math.abs(off) < 10 ? 1 : Math.abs(off) < 25 ? 2 : 3;
      group.classList.remove("acc-good", "acc-near", "acc-far", "acc-missed", ...rank);
      group.classList.add(rank[Math.max(was, now)]);
      // One tooltip a note, a line for each chord it is part of.
      let title = group.querySelector("title.tog");
      if (!title) {
        title = document.createElementNS("http://www.w3.org/2000/svg", "title");
        title.classList.add("tog");
        group.appendChild(title);
      }
      const just = chord.againstJust[part];
      const said = "m. " + chord.measure + ", beat " + chord.beat + ": " + part + (bass ? ", the chord's bass"
        : " " + Math.abs(Math.round(off)) + " cents " + (off >= 0 ? "sharp" : "flat") + " of the interval above the bass"
          + (typeof just === "number" ? " (" + (just >= 0 ? "+" : "") + Math.round(just) + " against just intonation)" : ""));
      title.textContent = title.textContent ? title.textContent + "\n" + said : said;
    }
  }
  // The choir's pitch from the first chord to the last (a rate a minute over a few bars says little).
  const moved = blend.ensemble.endCents - blend.ensemble.startCents;
  $("together-summary").textContent = blend.parts.map((part) => part.name + " (take " + part.take + ")").join(", ") + ": "
    + blend.chords.length + " chords, " + blend.entries.length + " entries together"
    + (typeof moved === "number" && blend.chords.length > 1 ? ", the choir " + (Math.abs(moved) < 5 ? "held its pitch"
      : "went " + Math.abs(Math.round(moved)) + " cents " + (moved > 0 ? "sharp" : "flat") + " from the first chord to the last") : "");
  for (const line of blend.lines.concat(blend.leftOut)) child(list, "li", null, line);
}

$("together-ask").addEventListener("click", async () => {
  $("together-ask").disabled = true;  // until the blend (or a refusal) comes back
  const done = await post("/api/blend", "");
  if (!done.ok) $("together-ask").disabled = false;
});
$("together-hide").addEventListener("click", () => { clearBlend(); $("together-view").hidden = true; if (csrf !== null) loadAnalysis(); });

// The lyric groups of the sung part and verse, in time order.
function findSyllables() {
  if (!live) return;
  const part = CSS.escape(live.part);
  syllables = Array.from(document.querySelectorAll(`#score g.syl[data-part="${part}"][data-verse="${live.verse}"]`))
    .map((element) => ({ element: element, sample: Number(element.dataset.sample) }))
    .sort((a, b) => a.sample - b.sample);
  syllables.key = live.part + "/" + live.verse;
}

function listen() {
  const events = new EventSource("/events");
  events.onmessage = (message) => {
    live = JSON.parse(message.data);
    receivedAt = performance.now();
    // acapella-bench web reads what arrived when (off unless it asks).
    if (window.benchEvents) window.benchEvents.push([receivedAt, live.published, live.sample, live.state]);
    $("song").textContent = live.song;
    // A recording set: every part it records, each with its input.
    $("part").textContent = live.together && live.together.length > 1 ? "together: " + live.together.join(" · ") : live.part;
    $("transport").textContent = live.state;
    $("position").textContent = "m. " + live.measure + "." + live.beat;
    for (const state of ["playing", "recording", "stopped", "count-in"]) document.body.classList.toggle(state, live.state === state);
    document.body.classList.toggle("looping", !!live.loop);
    showSettings();
    $("ranges").textContent = (live.loop ? "loop " + live.loop + " " : "") + (live.punch ? "punch " + live.punch : "");
    if (dragFrom === null) showRanges();
    // The reference recording, and its lyrics in time while it is heard.
    $("reference").textContent = live.reference || "";
    $("reference-button").hidden = !live.reference;
    $("reference-lyric").hidden = !live.referenceLyric;
    $("reference-lyric").textContent = live.referenceLyric || "";
    showNeedle();
    drawSpectrum(live.spectrum);
    document.body.classList.toggle("review", live.review);
    showReview();
    // The box's message line, unless the page just said something itself
    // (at review the sheet says it, in words for buttons, not keys).
    if (live.message && !live.review && live.message !== saidText && performance.now() - saidAt > 3000) say(live.message, false);
    if (live.song !== shownSong) { shownSong = live.song; shownScore = live.scoreVersion; loadScore(); if (csrf !== null) loadTakes(); }
    else if (live.scoreVersion !== shownScore) {
      // Another size engraved: reloaded only when it is the one this screen shows.
      shownScore = live.scoreVersion;
      if ((live.scoreVersions || {})[scoreSize()] !== loadedVersion) loadScore();
    }
  };
  if (csrf !== null) {
    events.addEventListener("takes", () => loadTakes());
    events.addEventListener("library", () => loadLibrary());
    events.addEventListener("analysis", () => loadAnalysis());
    events.addEventListener("blend", () => loadBlend());
  }
  requestAnimationFrame(draw);
}

// Notes as a singer reads them: E♭4, F♯4.
const spell = (name) => name.replace(/^([A-G])b/, "$1♭").replace("#", "♯");

// The needle: the steadied centre as the mark (silent when nobody sings),
// the raw readings behind it as a faint trail of the last second; beside
// it, a moment after each note, that note's centre as the grade reads it.
const trail = [];
function showNeedle() {
  const cents = live.cents;
  $("note").textContent = live.note ? spell(live.note) : "–";
  $("cents").textContent = cents === null ? "" : (cents > 0 ? "+" : cents < 0 ? "−" : "±") + Math.abs(Math.round(cents));
  const mark = $("needle-mark");
  mark.style.left = (50 + (cents === null ? 0 : Math.max(-50, Math.min(50, cents)))) + "%";
  mark.className = cents === null ? "none" : Math.abs(cents) <= 10 ? "good" : Math.abs(cents) <= 25 ? "near" : "far";
  mark.dataset.cents = cents === null ? "" : cents.toFixed(1);
  const last = $("last-note"), lastCents = live.lastCents;
  last.textContent = live.lastNote && lastCents !== null && lastCents !== undefined
    ? "last " + spell(live.lastNote) + " " + (lastCents > 0 ? "+" : lastCents < 0 ? "−" : "±") + Math.abs(Math.round(lastCents)) : "";
  last.className = lastCents === null || lastCents === undefined ? "" : Math.abs(lastCents) <= 10 ? "good" : Math.abs(lastCents) <= 25 ? "near" : "far";
  trail.push(live.rawCents);
  if (trail.length > 30) trail.shift();
  const canvas = $("needle-trail"), context = canvas.getContext("2d");
  context.clearRect(0, 0, canvas.width, canvas.height);
  trail.forEach((raw, index) => {
    if (raw === null || raw === undefined) return;
    context.fillStyle = "rgba(60, 60, 60, " + (0.04 + 0.22 * index / trail.length) + ")";
    const x = canvas.width * (50 + Math.max(-50, Math.min(50, raw))) / 100;
    context.fillRect(x - 1, 3, 2, canvas.height - 6);
  });
  // The microphone's level: −60 dB empty, 0 dB full, red from −3 dB.
  const level = Math.max(0, Math.min(1, (live.level + 60) / 60));
  $("level-bar").style.height = (level * 100) + "%";
  $("level-bar").classList.toggle("hot", live.level > -3);
}

// What the rehearsal is set to, on the settings' buttons and values.
function showSettings() {
  $("tempo-value").textContent = "♩ = " + Math.round(live.tempo) + (live.tempoPercent !== 100 ? " (" + live.tempoPercent + " %)" : "");
  $("transpose-value").textContent = live.transpose === 0 ? "as written" : (live.transpose > 0 ? "+" : "−") + Math.abs(live.transpose) + " semitone" + (Math.abs(live.transpose) === 1 ? "" : "s");
  $("part-value").textContent = live.part;
  $("song-value").textContent = live.song;
  const pressed = (id, on, text) => { $(id).setAttribute("aria-pressed", String(on)); if (text) $(id).textContent = text; };
  pressed("count-in-button", live.countIn > 0, live.countIn > 0 ? "Count-in: " + live.countIn + (live.countIn === 1 ? " bar" : " bars") : "Count-in: off");
  pressed("metronome-button", live.metronome, "Metronome: " + (live.metronome ? "on" : "off"));
  pressed("guide-button", !live.guideMuted, "My guide: " + (live.guideMuted ? "muted" : "on"));
  pressed("solo-button", live.soloed, "My part alone: " + (live.soloed ? "on" : "off"));
  $("verse-button").textContent = "Verse " + live.verse;
  showMixer();
  showRecordingSet();
}

// The recording set: each part's input on the card (— for none), every
// part with an input recorded at once by Record and the foot switch, a
// take each. Chosen here, it holds until changed (the song opens again
// with it); the box's as shown unless the singer is choosing.
let setChoosing = false;
function showRecordingSet() {
  const names = (live.mixer || []).filter((strip) => !strip.reference && !strip.metronome).map((strip) => strip.name);
  const current = live.recordingSet || [];
  // At most 16 listed (a converting PCM offers 32), and any input the set already uses.
  const most = Math.max(Math.min(live.mostInputs || 1, 16), ...current);
  const holder = $("set-parts");
  const key = names.join("\n") + "|" + most + "|" + current.join(",");
  $("set-off").disabled = current.length === 0;
  $("set-apply").disabled = most < 2 && !setChoosing;
  // The singer's choice is kept while they choose — unless another song opened (other parts).
  if (holder.dataset.key === key || setChoosing && holder.dataset.names === names.join("\n")) return;
  setChoosing = false;
  holder.dataset.key = key;
  holder.dataset.names = names.join("\n");
  holder.innerHTML = "";
  $("set-about").textContent = current.some((input) => input > 0)
    ? "Recording at once: " + names.map((name, index) => current[index] ? name + " (input " + current[index] + ")" : null).filter((text) => text).join(", ") + "."
    : current.length > 0 ? "None of this song's parts is in the recording set: the part chosen records alone."
    : most < 2 ? "This device has one input: one part at a time." : "One part at a time. Give each singer's part the input of their microphone to record them at once.";
  names.forEach((name, index) => {
    const label = document.createElement("label");
    label.className = "set-part";
    const select = document.createElement("select");
    select.dataset.part = String(index);
    select.setAttribute("aria-label", name + "'s input");
    for (let input = 0; input <= most; input++) {
      const option = document.createElement("option");
      option.value = String(input);
      option.textContent = input === 0 ? "—" : "input " + input;
      select.appendChild(option);
    }
    select.value = String(current[index] || 0);
    select.disabled = most < 2;
    select.addEventListener("change", () => { setChoosing = true; $("set-apply").disabled = false; });
    label.append(name + " ", select);
    holder.appendChild(label);
  });
}
$("set-apply").addEventListener("click", async () => {
  const pairs = [...$("set-parts").querySelectorAll("select")].filter((select) => select.value !== "0").map((select) => select.dataset.part + "=" + select.value);
  await post("/api/together", pairs.join(","));
  // Taken or refused (the box said why), the lists show the box's set again.
  setChoosing = false;
  $("set-parts").dataset.key = "";
});
$("set-off").addEventListener("click", async () => {
  await post("/api/together", "");
  setChoosing = false;
  $("set-parts").dataset.key = "";
});

// The live mixer: a level slider per part (and the reference recording),
// moved as a MIDI fader moves it (0…127, 100 the part's own level), its
// place (pan, 64 the middle), its Mute and Solo, and a part's Takes switch
// (off: its guide tones sing instead, the takes kept); the box's state
// shown unless the singer's finger is on a slider.
function showMixer() {
  const holder = $("mixer");
  const strips = live.mixer || [];
  const key = strips.map((strip) => strip.name).join("\n");
  if (holder.dataset.key !== key) {
    holder.dataset.key = key;
    holder.innerHTML = "";
    strips.forEach((strip, index) => {
      const row = document.createElement("div");
      row.className = "strip";
      row.setAttribute("role", "group");
      row.setAttribute("aria-label", strip.name);
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = strip.name;
      const path = "/api/mix/" + (strip.metronome ? "metronome" : strip.reference ? "reference" : index) + "/";
      const fader = (control, label) => {
        const slider = document.createElement("input");
        slider.type = "range"; slider.min = "0"; slider.max = "127"; slider.step = "1";
        slider.className = control;
        slider.setAttribute("aria-label", label);
        let sent = null, timer = null;
        const send = () => {
          timer = null;
          if (sent === slider.value) return;
          sent = slider.value;
          post(path + control, slider.value);
        };
        // At most ten moves a second while dragging; the last always sent.
        slider.addEventListener("input", () => { if (timer === null) timer = setTimeout(send, 100); });
        slider.addEventListener("change", send);
        return slider;
      };
      const shown = document.createElement("output");
      // The metronome's strip: its level (on and off is the Metronome button).
      const names = { mute: ["M", "Mute "], solo: ["S", "Solo "], takes: ["T", "Takes of "] };
      const switches = (strip.metronome ? [] : strip.takes === null ? ["mute", "solo"] : ["mute", "solo", "takes"]).map((which) => {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "switch " + which;
        button.textContent = names[which][0];
        button.title = names[which][1] + strip.name + (which === "takes" ? " (off: its guide tones sing)" : "");
        button.setAttribute("aria-label", names[which][1] + strip.name);
        button.addEventListener("click", () => post(path + which, button.getAttribute("aria-pressed") === "true" ? "off" : "on"));
        return button;
      });
      const controls = [fader("level", strip.name + " level")];
      if (!strip.metronome) {
        controls.push(fader("pan", strip.name + " pan (left to right)"));
        controls[1].title = "Where " + strip.name + " is heard: left to right";
        row.classList.add("placed");
      }
      row.append(name, ...controls, shown, ...switches);
      holder.appendChild(row);
    });
  }
  strips.forEach((strip, index) => {
    const row = holder.children[index];
    const slider = row.querySelector("input.level"), pan = row.querySelector("input.pan"), shown = row.querySelector("output");
    const value = strip.levelDB === null ? 0 : Math.round(Math.min(127, 100 * Math.pow(10, strip.levelDB / 40)));
    if (document.activeElement !== slider) slider.value = String(value);
    if (pan && document.activeElement !== pan) pan.value = String(Math.round(64 + 63 * strip.pan));
    shown.textContent = strip.levelDB === null ? "silent" : (strip.levelDB >= 0 ? "+" : "−") + Math.abs(strip.levelDB).toFixed(1) + " dB";
    if (!strip.metronome) {
      row.querySelector(".mute").setAttribute("aria-pressed", String(strip.muted));
      row.querySelector(".solo").setAttribute("aria-pressed", String(strip.soloed));
    }
    const takes = row.querySelector(".takes");
    if (takes) takes.setAttribute("aria-pressed", String(strip.takes));
    row.classList.toggle("muted", strip.muted);
  });
}

// Review: the sheet with Listen, Keep, Discard the moment a take ends.
function showReview() {
  const sheet = $("review-sheet");
  const was = sheet.hidden;
  sheet.hidden = !live.review;
  if (live.review) {
    $("review-title").textContent = live.reviewTake ? "Take " + live.reviewTake + " recorded (" + live.reviewSeconds.toFixed(1) + " s): keep it?" : "Keep the take?";
  }
  if (was !== sheet.hidden) measureChrome();
}

// The voice's spectrum beside the needle: the bands as bars (−60 dB at the
// bottom), the envelope as a line, each formant a mark with its number;
// its frequencies beside. Log frequency from the box's lowest band to its
// highest.
function drawSpectrum(spectrum) {
  const canvas = $("spectrum");
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, canvas.width, canvas.height);
  $("voice").hidden = !spectrum;
  if (!spectrum) { $("formants").textContent = ""; return; }
  const width = canvas.width, height = canvas.height, count = spectrum.levels.length;
  const y = (db) => height * Math.min(1, Math.max(0, -db / 60));
  const x = (hz) => width * Math.log(hz / spectrum.from) / Math.log(spectrum.to / spectrum.from);
  context.fillStyle = "#b9cbe0";
  spectrum.levels.forEach((db, band) => {
    const top = y(db);
    context.fillRect(band * width / count, top, width / count - 0.5, height - top);
  });
  context.strokeStyle = "#1f4e8c";
  context.lineWidth = 1.5;
  context.beginPath();
  let drawing = false;
  spectrum.envelope.forEach((db, band) => {
    if (db === null) { drawing = false; return; }
    const px = (band + 0.5) * width / count;
    if (drawing) context.lineTo(px, y(db)); else context.moveTo(px, y(db));
    drawing = true;
  });
  context.stroke();
  context.fillStyle = "#c01c28";
  context.font = "9px sans-serif";
  spectrum.formants.forEach((hz, index) => {
    const px = x(hz);
    context.fillRect(px - 0.75, 0, 1.5, height);
    context.fillText(String(index + 1), px + 2, 9);
  });
  $("formants").textContent = spectrum.formants.map((hz, index) => "F" + (index + 1) + " " + hz).join(" · ");
}

// The song sample now: the last one the box sent, moved on by the time
// since while playing (corrected by every message).
function sampleNow() {
  if (!live) return 0;
  const playing = live.state === "playing" || live.state === "recording";
  return live.sample + (playing ? (performance.now() - receivedAt) / 1000 * sampleRate : 0);
}

function draw() {
  requestAnimationFrame(draw);
  if (!timeMap || !live) return;
  const svg = document.querySelector("#score svg");
  const cursor = $("cursor");
  if (!svg || !cursor) return;
  const sample = sampleNow();
  const onsets = timeMap.onsets;
  let index = 0;
  while (index + 1 < onsets.length && onsets[index + 1].sample <= sample) index += 1;
  const here = onsets[index];
  const next = onsets[index + 1];
  let x = here.x;
  if (next && next.system === here.system && next.sample > here.sample) {
    x += (next.x - here.x) * Math.min(1, (sample - here.sample) / (next.sample - here.sample));
  }
  const system = timeMap.systems[here.system];
  const scale = svg.clientWidth / timeMap.width;
  cursor.style.left = (x * scale) + "px";
  cursor.style.top = (system.top * scale) + "px";
  cursor.style.height = ((system.bottom - system.top) * scale) + "px";
  cursor.dataset.measure = here.measure;
  cursor.dataset.sample = Math.round(sample);
  if (window.benchCursor && live.state !== "stopped") window.benchCursor.push([performance.now(), sample]);
  // The syllable being sung.
  if (syllables.key !== live.part + "/" + live.verse) findSyllables();
  let lit = -1;
  while (lit + 1 < syllables.length && syllables[lit + 1].sample <= sample) lit += 1;
  if (syllables.lit !== lit) {
    if (syllables.lit >= 0 && syllables[syllables.lit]) syllables[syllables.lit].element.classList.remove("lit");
    if (lit >= 0 && live.state !== "stopped") syllables[lit].element.classList.add("lit");
    syllables.lit = live.state !== "stopped" ? lit : -1;
  }
  // Turn ahead: the system being sung kept just below the header, once
  // per system (not every frame: a swipe is not undone), and not at all
  // while the singer has scrolled away by hand.
  if (live.state !== "stopped" && following) keepInView(system, scale, here.system);
}

let following = true;
let turnedTo = null;
function keepInView(system, scale, index) {
  if (turnedTo === index) return;  // turned to (or found in view) already
  turnedTo = index;
  const holder = $("score").getBoundingClientRect();
  const header = $("top").getBoundingClientRect().bottom;
  const bottom = barAtTheBottom() ? $("controls").getBoundingClientRect().top : window.innerHeight;
  let top = holder.top + system.top * scale, end = holder.top + system.bottom * scale;
  // A system taller than the screen: the singer's own staff is what must show.
  if (end - top > bottom - header - 8) {
    const staff = sungStaff(index);
    if (staff) { top = Math.max(top, staff.top - 12); end = Math.min(end, staff.bottom + 4); }
  }
  if (pageTurns) {
    // Turned when the line after this one is not wholly in view: this line to the top, at once.
    const after = timeMap.systems[index + 1];
    const afterShown = !after || holder.top + after.bottom * scale <= bottom - 4;
    if (top >= header + 4 && end <= bottom - 4 && afterShown) return;
    window.scrollTo({ top: Math.max(0, window.scrollY + top - header - 8), behavior: "instant" });
    return;
  }
  if (top >= header + 4 && end <= bottom - 4) return;
  window.scrollTo({ top: Math.max(0, window.scrollY + top - header - 8), behavior: "smooth" });
}

// The controls as a bar along the bottom edge (a phone), not a column beside the score.
function barAtTheBottom() {
  const controls = $("controls");
  return !controls.hidden && controls.getBoundingClientRect().left <= 1;
}

// Where the singer's part is drawn in a system (its notes and words), on the screen.
function sungStaff(index) {
  const onsets = timeMap.onsets.filter((onset) => onset.system === index);
  const measures = new Set(onsets.map((onset) => String(onset.measure)));
  const next = timeMap.onsets.find((onset) => onset.system > index);
  const from = Math.min(...onsets.map((onset) => onset.sample)), to = next ? next.sample : Infinity;
  const part = CSS.escape(live.part);
  let top = Infinity, bottom = -Infinity;
  for (const element of document.querySelectorAll(`#score g.note[data-part="${part}"], #score g.syl[data-part="${part}"]`)) {
    const inside = element.classList.contains("syl")
      ? Number(element.dataset.sample) >= from && Number(element.dataset.sample) < to : measures.has(element.dataset.measure);
    if (!inside) continue;
    const box = element.getBoundingClientRect();
    top = Math.min(top, box.top);
    bottom = Math.max(bottom, box.bottom);
  }
  return top < bottom ? { top: top, bottom: bottom } : null;
}

// The singer scrolls by hand: the page stops following until asked.
function follow(on) {
  // A turn still gliding when the singer takes over stops where it is.
  if (!on && following) window.scrollTo({ top: window.scrollY, behavior: "instant" });
  following = on;
  $("follow").hidden = on;
  if (on) turnedTo = null;
}
for (const kind of ["wheel", "touchmove"]) {
  window.addEventListener(kind, (event) => {
    if (event.touches && event.touches.length > 1) return;  // a pinch is a zoom, not a scroll
    if (live && live.state !== "stopped" && !event.target.closest("#controls")) follow(false);
  }, { passive: true });
}
window.addEventListener("keydown", (event) => {
  if (["PageUp", "PageDown", "ArrowUp", "ArrowDown", "Home", "End", " "].includes(event.key) && live && live.state !== "stopped") follow(false);
});
$("follow").addEventListener("click", () => follow(true));

// MARK: measures tapped or dragged → the loop or punch range.

function measureAt(event) {
  const svg = document.querySelector("#score svg");
  if (!svg || !timeMap) return null;
  const box = svg.getBoundingClientRect();
  const scale = box.width / timeMap.width;
  const x = (event.clientX - box.left) / scale;
  const y = (event.clientY - box.top) / scale;
  const system = timeMap.systems.findIndex((s) => y >= s.top - 4 && y <= s.bottom + 8);
  if (system < 0) return null;
  let measure = null;
  for (const onset of timeMap.onsets) {
    if (onset.system === system && onset.x <= x + 1) measure = onset.measure;
  }
  if (measure === null) measure = timeMap.systems[system].first;
  return measure;
}

let dragFrom = null;
$("score").addEventListener("pointerdown", (event) => {
  if (!$("select-mode").value) return;
  dragFrom = measureAt(event);
  if (dragFrom !== null) { event.preventDefault(); showRanges(dragFrom + "-" + dragFrom); }
});
$("score").addEventListener("pointermove", (event) => {
  if (dragFrom === null) return;
  const to = measureAt(event);
  if (to !== null) showRanges(Math.min(dragFrom, to) + "-" + Math.max(dragFrom, to));
});
window.addEventListener("pointerup", async (event) => {
  if (dragFrom === null) return;
  const to = measureAt(event);
  const from = dragFrom;
  dragFrom = null;
  const last = to === null ? from : to;
  const range = Math.min(from, last) + "-" + Math.max(from, last);
  await post("/api/" + $("select-mode").value, range);
});

// The loop and the punch shaded on each system they cross, as the box
// has them (while a drag is under way, the measures being dragged over);
// drawn again when the score is laid out again (a phone turned).
let shaded = null;
function showRanges(dragged) {
  const selection = $("selection");
  const svg = document.querySelector("#score svg");
  if (!selection || !svg || !timeMap) return;
  const ranges = dragged ? [[dragged, $("select-mode").value || "loop"]]
    : live ? [[live.loop, "loop"], [live.punch, "punch"]].filter(([range]) => range) : [];
  const key = JSON.stringify(ranges) + "/" + svg.clientWidth + "/" + timeMap.width;
  if (key === shaded && selection.isConnected) return;
  shaded = key;
  const scale = svg.clientWidth / timeMap.width;
  selection.innerHTML = "";
  for (const [range, kind] of ranges) {
    const [from, to] = range.split("-").map(Number);
    timeMap.systems.forEach((system, index) => {
      const inside = timeMap.onsets.filter((onset) => onset.system === index && onset.measure >= from && onset.measure <= to);
      if (inside.length === 0) return;
      const after = timeMap.onsets.find((onset) => onset.system === index && onset.measure > to);
      const left = Math.min(...inside.map((onset) => onset.x)) - 1;
      const right = after ? after.x - 1 : timeMap.width - 2;
      const shade = document.createElement("div");
      shade.className = "shade " + kind;
      shade.style.left = (left * scale) + "px";
      shade.style.width = ((right - left) * scale) + "px";
      shade.style.top = (system.top * scale) + "px";
      shade.style.height = ((system.bottom - system.top) * scale) + "px";
      selection.appendChild(shade);
    });
  }
  selection.dataset.range = ranges.length ? ranges[ranges.length - 1][0] : "";
}

// MARK: Takes

async function loadTakes() {
  const response = await fetch("/api/takes");
  if (!response.ok) return;
  const list = await response.json();
  // Another song or project: its takes, so nothing of the last one stays in the player.
  const of = list.song + "/" + ((list.projects || []).find((project) => project.current) || {}).name;
  if (takesOf !== null && of !== takesOf) forgetPlayer();
  takesOf = of;
  const holder = $("takes-list");
  holder.innerHTML = "";
  list.parts.forEach((part, index) => {
    const heading = document.createElement("h2");
    heading.textContent = part + (index === list.currentPart ? " (yours now)" : "");
    holder.appendChild(heading);
    const takes = list.takes.filter((take) => take.part === part).reverse();
    if (takes.length === 0) {
      const none = document.createElement("p");
      none.textContent = "no takes yet: the guide tones sing it";
      holder.appendChild(none);
      return;
    }
    const table = document.createElement("table");
    for (const take of takes) {
      const row = table.insertRow();
      row.className = "take " + take.state + (take.active ? " active" : "");
      row.dataset.take = take.id;
      const recorded = take.recorded ? new Date(take.recorded).toLocaleString() : "";
      const cells = ["take " + take.id + (take.name ? " “" + take.name + "”" : ""), take.state + (take.active ? ", plays" : ""), take.seconds.toFixed(1) + " s",
        take.measures ? "mm. " + take.measures : "whole song", recorded,
        (take.nudgeMilliseconds ? (take.nudgeMilliseconds > 0 ? "+" : "") + take.nudgeMilliseconds.toFixed(1) + " ms" : "") + (take.note ? " " + take.note : "")];
      for (const text of cells) row.insertCell().textContent = text;
      // Its analysis score beside its name, once the box has analysed it.
      const score = document.createElement("span");
      score.className = "score" + (take.score === null ? "" : take.score >= 85 ? " good" : take.score >= 60 ? " fair" : " poor");
      score.textContent = take.score !== null ? take.score + "/100" : take.state === "kept" || take.state === "recovered" ? "analysing…" : "";
      row.cells[0].append(" ", score);
      const actions = row.insertCell();
      if (take.state === "recording") continue;
      const button = (label, handler) => {
        const element = document.createElement("button");
        element.textContent = label;
        element.addEventListener("click", handler);
        actions.appendChild(element);
        return element;
      };
      const from = take.heardFromMeasure !== null ? ", from m. " + take.heardFromMeasure : "";
      button("▶ alone", () => play("/download/take-" + take.id + ".wav", "Take " + take.id + " (" + take.part + ") alone"));
      button("▶ with the others", () => play("/download/take-" + take.id + "-with-others.wav", "Take " + take.id + " (" + take.part + ") with the others" + from,
        take.heardFromSeconds));
      const ab = button("A/B", () => chooseCompared(take));
      ab.className = "ab-choose";
      ab.setAttribute("aria-label", "Compare take " + take.id);
      ab.setAttribute("aria-pressed", String(compared.some((t) => t.id === take.id)));
      if (!take.active) button("activate", () => post("/api/take/" + take.id + "/activate", "", { "X-Takes": list.key }));
      if (take.state !== "discarded") button("discard", () => post("/api/take/" + take.id + "/discard", "", { "X-Takes": list.key }));
      // Named as the singer knows it ("the good one"); nothing clears it.
      button("name…", () => {
        const name = prompt("A name for take " + take.id + " (nothing takes its name away):", take.name || "");
        if (name !== null) post("/api/take/" + take.id + "/name", name.trim(), { "X-Takes": list.key });
      }).setAttribute("aria-label", "Name take " + take.id);
      button("−10 ms", () => post("/api/take/" + take.id + "/nudge", "-10", { "X-Takes": list.key }));
      button("+10 ms", () => post("/api/take/" + take.id + "/nudge", "10", { "X-Takes": list.key }));
      const link = document.createElement("a");
      link.href = "/download/take-" + take.id + ".wav";
      link.download = "";
      link.textContent = "WAV";
      actions.appendChild(link);
    }
    holder.appendChild(table);
  });
  $("reference-take").hidden = !list.reference;
  $("reference-about").textContent = list.reference || "";
  showProjects(list.projects || []);
  const practice = $("practice");
  practice.innerHTML = "";
  list.parts.forEach((part, index) => {
    const item = document.createElement("li");
    item.textContent = part + ": ";
    for (const format of ["wav", "flac", "mp3", "m4a"]) {
      const link = document.createElement("a");
      link.href = "/download/practice-" + index + "." + format;
      link.download = "";
      link.className = "download";
      link.textContent = format.toUpperCase();
      item.appendChild(link);
      item.appendChild(document.createTextNode(" "));
    }
    practice.appendChild(item);
  });
}

// The song's projects: the open one said at the top of Takes; each other
// one opened, or moved to the trash after a yes (kept 30 days, its takes with it).
function showProjects(projects) {
  const open = projects.find((project) => project.current);
  $("project-now").textContent = open ? "Project: " + open.name + " (" + open.takes + (open.takes === 1 ? " take)" : " takes)") : "";
  const list = $("project-list");
  list.innerHTML = "";
  for (const project of projects) {
    const item = child(list, "li", project.current ? "current" : "");
    item.dataset.project = project.name;
    child(item, "span", "name", project.name + (project.current ? " (open)" : ""));
    child(item, "span", "count", project.takes + (project.takes === 1 ? " take" : " takes"));
    if (project.current) continue;
    const choose = child(item, "button", "", "open");
    choose.setAttribute("aria-label", "Open project " + project.name);
    choose.addEventListener("click", () => post("/api/project/open", project.name));
    const remove = child(item, "button", "remove", "delete");
    remove.setAttribute("aria-label", "Delete project " + project.name);
    remove.addEventListener("click", () => {
      const what = project.takes === 0 ? "" : " and its " + project.takes + (project.takes === 1 ? " take" : " takes");
      if (confirm("Move project '" + project.name + "'" + what + " to the trash? It is kept there 30 days.")) post("/api/project/remove", project.name);
    });
  }
}

// A new element at the end of `parent`: its tag, class and words.
function child(parent, tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  parent.appendChild(element);
  return element;
}

$("project-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("project-name").value.trim();
  if (!name) return;
  const done = await post("/api/project/new", name);
  if (done.ok) $("project-name").value = "";
});

let takesOf = null;
function forgetPlayer() {
  const player = $("player");
  player.pause();
  player.removeAttribute("src");
  player.load();
  $("now-playing").textContent = "Choose a take to hear it.";
  compared = [];
  showCompared();
}

// The player at the top of Takes: what plays, said; "with the others"
// from where the take is heard (a punch-in: a measure before its own).
function play(url, label, fromSeconds, thenPlay) {
  const player = $("player");
  $("now-playing").textContent = label || "";
  player.src = url;
  const start = () => {
    if (fromSeconds > 0) player.currentTime = Math.min(fromSeconds, player.duration || fromSeconds);
    if (thenPlay !== false) player.play().catch(() => {});
  };
  if (fromSeconds > 0) player.addEventListener("loadedmetadata", start, { once: true }); else start();
}

// A/B: two takes, each on its own, switched in time (the same moment of
// the song, through each take's own place on it).
let compared = [], hearingB = false;
function chooseCompared(take) {
  if (compared.length === 2 || compared.some((t) => t.id === take.id)) compared = [];
  compared.push({ id: take.id, part: take.part, fileStartSeconds: take.fileStartSeconds });
  hearingB = false;
  if (compared.length === 1) say("take " + take.id + " is A: choose B with its A/B");
  showCompared();
  play("/download/take-" + compared[0].id + ".wav", "A: take " + compared[0].id + " (" + compared[0].part + ")");
  for (const button of document.querySelectorAll(".ab-choose"))
    button.setAttribute("aria-pressed", String(compared.some((t) => "Compare take " + t.id === button.getAttribute("aria-label"))));
}
function showCompared() {
  $("ab").hidden = compared.length !== 2;
  if (compared.length !== 2) return;
  $("ab-about").textContent = "A: take " + compared[0].id + ", B: take " + compared[1].id;
  $("ab-switch").textContent = hearingB ? "Hear A" : "Hear B";
  $("ab-switch").setAttribute("aria-pressed", String(hearingB));
}
$("ab-switch").addEventListener("click", () => {
  if (compared.length !== 2) return;
  const player = $("player");
  const [from, to] = hearingB ? [compared[1], compared[0]] : [compared[0], compared[1]];
  const songTime = player.currentTime + from.fileStartSeconds;
  const playing = !player.paused;
  hearingB = !hearingB;
  showCompared();
  play("/download/take-" + to.id + ".wav", (hearingB ? "B" : "A") + ": take " + to.id + " (" + to.part + ")",
    Math.max(0.001, songTime - to.fileStartSeconds), playing);
});
$("ab-clear").addEventListener("click", () => {
  compared = [];
  showCompared();
  for (const button of document.querySelectorAll(".ab-choose")) button.setAttribute("aria-pressed", "false");
});

$("undo").addEventListener("click", () => post("/api/undo", ""));
$("reference-remove").addEventListener("click", () => { if (confirm("Remove the reference recording from this project?")) post("/api/reference/remove", ""); });

// MARK: Library

let songs = [];
async function loadLibrary() {
  const response = await fetch("/api/library");
  if (!response.ok) return;
  songs = (await response.json()).songs;
  const filter = $("tag-filter");
  const chosen = filter.value;
  const tags = [...new Set(songs.flatMap((song) => song.tags))].sort();
  filter.innerHTML = '<option value="">all songs</option>' + tags.map((tag) => "<option></option>").join("");
  tags.forEach((tag, index) => { filter.options[index + 1].value = tag; filter.options[index + 1].textContent = tag; });
  filter.value = tags.includes(chosen) ? chosen : "";
  showSongs();
}

// Words compared as a singer types them: any case, any accents.
const plain = (text) => text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();

// "Soprano, Alto, Tenor, Bass · 12 measures, 0:48 · 3 verses".
function songAbout(song) {
  if (!song.parts || song.parts.length === 0) return "";
  const length = song.measures + (song.measures === 1 ? " measure, " : " measures, ") +
    Math.floor(song.seconds / 60) + ":" + String(song.seconds % 60).padStart(2, "0");
  const verses = song.verses > 1 ? " · " + song.verses + " verses" : "";
  return song.parts.join(", ") + " · " + length + verses;
}

function showSongs() {
  const tag = $("tag-filter").value;
  const words = plain($("song-search").value).split(/\s+/).filter((word) => word);
  const list = $("songs");
  list.innerHTML = "";
  const found = songs.filter((song) => (!tag || song.tags.includes(tag)) &&
    words.every((word) => plain(song.title + " " + song.tags.join(" ") + " " + (song.parts || []).join(" ")).includes(word)));
  $("song-count").textContent = found.length === songs.length ? songs.length + " songs" : found.length + " of " + songs.length + " songs";
  for (const song of found) {
    const item = child(list, "li", song.current ? "current" : "");
    item.dataset.song = song.index;
    child(item, "span", "title", song.title);
    child(item, "span", "tags", song.tags.join(", ") + (song.uploaded ? (song.tags.length ? ", " : "") + "added here" : ""));
    // What the song is before choosing it: its parts, length and verses.
    child(item, "span", "about", songAbout(song));
    if (!song.current) child(item, "button", "", "sing this").addEventListener("click", () => post("/api/choose", String(song.index)));
    // A song the singer added: renamed, tagged, or (not the one open) to the trash (kept 30 days; its takes stay).
    if (song.uploaded) {
      const rename = child(item, "button", "", "rename…");
      rename.setAttribute("aria-label", "Rename " + song.title);
      rename.addEventListener("click", () => {
        const title = prompt("A new title for '" + song.title + "':", song.title);
        if (title !== null && title.trim() && title.trim() !== song.title) post("/api/song/" + song.index + "/title", title.trim());
      });
      const retag = child(item, "button", "", "tags…");
      retag.setAttribute("aria-label", "Tags of " + song.title);
      retag.addEventListener("click", () => {
        const tags = prompt("Tags for '" + song.title + "', commas between:", song.tags.join(", "));
        if (tags !== null) post("/api/song/" + song.index + "/tags", tags);
      });
    }
    if (song.uploaded && !song.current) {
      const remove = child(item, "button", "remove", "remove");
      remove.setAttribute("aria-label", "Remove " + song.title);
      remove.addEventListener("click", () => {
        if (confirm("Move '" + song.title + "' to the trash? It is kept there 30 days; its takes stay.")) post("/api/song/" + song.index + "/remove", "");
      });
    }
  }
}

$("tag-filter").addEventListener("change", showSongs);
$("song-search").addEventListener("input", showSongs);

$("upload-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = $("upload-file").files[0];
  if (!file) return;
  const report = $("upload-report");
  if (file.size > 8 * 1024 * 1024) { report.textContent = file.name + ": larger than 8 MiB"; return; }
  report.textContent = "importing " + file.name + "…";
  const result = await post("/api/upload", await file.arrayBuffer(), { "X-File-Name": encodeURIComponent(file.name) });
  report.textContent = result.ok
    ? "added '" + result.reply.title + "'" + (result.reply.report.length ? ":\n" + result.reply.report.join("\n") : " (nothing to report)")
    : file.name + ": " + result.reply.error;
  report.className = result.ok ? "" : "error";
  if (result.ok) loadLibrary();
});

start();
