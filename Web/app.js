// The box's page: pair once, then the score with a cursor that follows the
// audio (the box's song sample, moved on by the page's clock between
// messages), the transport and the needle.
"use strict";
let csrf = null;
let timeMap = null;
let live = null;
let receivedAt = 0;
let shownSong = null;
const sampleRate = 48000;

async function start() {
  const response = await fetch("/api/state");
  if (response.status === 401) { document.getElementById("pair").hidden = false; return; }
  const state = await response.json();
  csrf = state.csrf || null;
  await loadScore();
  listen();
}

document.getElementById("pair-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/api/pair", { method: "POST", body: document.getElementById("code").value });
  const reply = await response.json();
  if (!response.ok) { document.getElementById("pair-error").textContent = reply.error; return; }
  csrf = reply.csrf;
  document.getElementById("pair").hidden = true;
  await loadScore();
  listen();
});

function showControls() {
  document.getElementById("controls").hidden = csrf === null;
}

document.getElementById("controls").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || csrf === null) return;
  await fetch("/api/action", { method: "POST", headers: { "X-CSRF-Token": csrf }, body: button.dataset.action });
});

async function loadScore() {
  showControls();
  const [svg, map] = await Promise.all([fetch("/score.svg"), fetch("/timemap.json")]);
  if (!svg.ok) return;
  const holder = document.getElementById("score");
  holder.innerHTML = await svg.text();
  timeMap = await map.json();
  const cursor = document.createElement("div");
  cursor.id = "cursor";
  holder.appendChild(cursor);
}

function listen() {
  const events = new EventSource("/events");
  events.onmessage = (message) => {
    live = JSON.parse(message.data);
    receivedAt = performance.now();
    document.getElementById("song").textContent = live.song;
    document.getElementById("part").textContent = live.part;
    document.getElementById("transport").textContent = live.state;
    document.getElementById("position").textContent = live.measure + "." + live.beat;
    document.getElementById("note").textContent = live.note || "–";
    document.getElementById("cents").textContent = live.cents === null ? "" : (live.cents > 0 ? "+" : "") + Math.round(live.cents);
    document.body.classList.toggle("review", live.review);
    if (live.song !== shownSong) { shownSong = live.song; loadScore(); }
  };
  requestAnimationFrame(draw);
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
  const cursor = document.getElementById("cursor");
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
  const top = system.top * scale;
  if (live.state !== "stopped" && (top < window.scrollY + 40 || top > window.scrollY + window.innerHeight * 0.6)) {
    window.scrollTo({ top: Math.max(0, top - 60), behavior: "smooth" });
  }
}

start();
