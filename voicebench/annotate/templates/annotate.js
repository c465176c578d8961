(() => {
  "use strict";
  const body = document.body;
  if (body.dataset.view !== "task") return;
  const session = document.querySelector('meta[name="vb-session"]').content;
  const started = performance.now();
  const order = ["seeker", "a", "b"]
    .map((name) => document.getElementById("clip-" + name))
    .filter((el) => el !== null);
  const played = new Set();
  let current = 0;
  let sending = false;
  const status = document.getElementById("status");

  const go = (id) => { if (id) window.location.assign("/task/" + id); };
  const pauseAll = (except) => order.forEach((el) => { if (el !== except) el.pause(); });
  const play = (el) => {
    pauseAll(el);
    current = order.indexOf(el);
    el.play().catch((err) => { status.textContent = "Could not play: " + err.message; });
  };
  order.forEach((el, k) => {
    el.addEventListener("play", () => {
      played.add(el.dataset.clip);
      current = k;
      pauseAll(el);
      el.classList.add("playing");
    });
    el.addEventListener("pause", () => el.classList.remove("playing"));
    el.addEventListener("ended", () => {
      el.classList.remove("playing");
      if (k + 1 < order.length) { el.currentTime = 0; play(order[k + 1]); }
      else { current = 0; }
    });
  });

  const toggle = () => {
    const playing = order.find((el) => !el.paused);
    if (playing) { playing.pause(); return; }
    if (order.length) play(order[current]);
  };

  const answer = (choice) => {
    if (sending || body.dataset.answered) return;
    sending = true;
    const dimensions = {};
    document.querySelectorAll('input[type="radio"]:checked').forEach((r) => {
      if (r.value) dimensions[r.name.slice(4)] = r.value;
    });
    const payload = {
      task: body.dataset.task,
      choice: choice,
      dimensions: dimensions,
      comment: document.getElementById("comment").value,
      played: order.map((el) => el.dataset.clip).filter((name) => played.has(name)),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
    status.textContent = "Saving…";
    fetch("/answer", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Session-Token": session },
      body: JSON.stringify(payload),
    })
      .then((resp) => resp.ok
        ? resp.json().then((data) => window.location.assign(data.next))
        : resp.text().then((text) => { status.textContent = "Not saved: " + text; sending = false; }))
      .catch((err) => { status.textContent = "Not saved: " + err.message; sending = false; });
  };

  document.querySelectorAll("button.choice").forEach((b) => {
    b.addEventListener("click", () => answer(Number(b.dataset.choice)));
  });

  document.addEventListener("keydown", (ev) => {
    const typing = ev.target instanceof HTMLTextAreaElement;
    if (typing) { if (ev.key === "Escape") ev.target.blur(); return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const key = ev.key;
    if (key >= "1" && key <= "5") answer(Number(key));
    else if (key === " ") toggle();
    else if (key === "s" || key === "a" || key === "b") {
      const el = document.getElementById("clip-" + (key === "s" ? "seeker" : key));
      if (el) { el.currentTime = 0; play(el); }
    } else if (key === "t") {
      document.querySelectorAll(".reply details").forEach((d) => { d.open = !d.open; });
    } else if (key === "ArrowLeft") go(body.dataset.prev);
    else if (key === "ArrowRight") go(body.dataset.next);
    else return;
    ev.preventDefault();
  });
})();
