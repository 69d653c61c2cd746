// Shared by the playground's pages: a JSON call to the REST API with the signed-in session, and an
// element holding text. Memory content is user input: it is only ever placed in a page as text.
(function () {
  "use strict";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // call(path, options) for the API below `api` (options.contentType: the body's, JSON by default); an
  // error's message is the API's detail.
  function caller(api, csrf) {
    return async function call(path, options = {}) {
      const response = await fetch(api + path, {
        credentials: "same-origin",
        ...options,
        headers: { "Content-Type": options.contentType || "application/json", Accept: "application/json", "X-CSRFToken": csrf },
      });
      const body = response.status === 204 ? null : await response.json().catch(() => null);
      if (!response.ok) {
        const detail = body && (body.detail || Object.values(body).flat().join(" "));
        throw new Error(detail || `${response.status} ${response.statusText}`);
      }
      return body;
    };
  }

  // streamer(path, body, onEvent, signal): POST `body` and call onEvent(name, data) for each server-sent
  // event of the answer as it arrives (a chat reply with "stream": true). An answer that is not a stream
  // (a refusal before the reply began) throws with the API's detail; `signal` aborts it (the stop button).
  function streamer(api, csrf) {
    return async function stream(path, body, onEvent, signal) {
      const response = await fetch(api + path, {
        method: "POST",
        credentials: "same-origin",
        body: JSON.stringify(body),
        signal,
        // A refusal before the stream began comes as JSON.
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "X-CSRFToken": csrf },
      });
      if (!response.ok || !(response.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
        const answer = await response.json().catch(() => null);
        const detail = answer && (answer.detail || Object.values(answer).flat().join(" "));
        throw new Error(detail || `${response.status} ${response.statusText}`);
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (data.length) onEvent(name, JSON.parse(data.join("\n")));
        }
      }
    };
  }

  // jobDone(call, job, onChange): a restore or comparison that a worker does (202 and a job), polled at
  // `jobs/{id}/` of the same space until it is over; resolves with its result, rejects with its error.
  async function jobDone(call, job, onChange = () => {}) {
    for (;;) {
      onChange(job);
      if (job.status === "succeeded") return job.result;
      if (job.status === "failed") throw new Error(job.error || `the ${job.kind} failed`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      job = await call(`jobs/${job.id}/`);
    }
  }

  window.Playground = { el, caller, streamer, jobDone };
})();
