// HTTP/1.1 message framing for the connection guard (_conn_guard.ts): where each request's head
// and body end, so the guard can time them and stamp the client's address into the head, and
// where each response ends, so the guard knows when a connection is idle or must close. Only
// framing is read here; the HTTP server behind the guard parses the rest. Requests are held to
// a strict subset of HTTP/1.1 framing (no bare LF, no obs-fold, no Content-Length together with
// Transfer-Encoding, chunked as the only coding), so that the guard and that server can never
// disagree on where a request ends (request smuggling): anything ambiguous is refused.

const CR = 13;
const LF = 10;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP\/(\d)\.(\d)$/;
// Control characters other than HTAB are not field content (RFC 9110 section 5.5).
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const MAX_CHUNK_LINE = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;
// Bytes map one to one onto characters, so string offsets are byte offsets.
const latin1 = new TextDecoder("latin1");
const encoder = new TextEncoder();

/** A request the guard refuses, with the status to answer it with. */
export interface FramingError {
  status: number;
  message: string;
}

/** What the guard needs to know of one request head. */
export interface RequestHead {
  method: string;
  /** The request target as sent (e.g. `/health?x=1`). */
  target: string;
}

/** What feeding bytes to a {@linkcode RequestFramer} gave. */
export interface RequestStep {
  /** Bytes to pass on to the server, in order (heads rewritten with the stamp). */
  forward: Uint8Array[];
  /** The heads completed by these bytes, in order. */
  heads: RequestHead[];
  /** The bytes broke the framing rules: answer this and close (after `forward`). */
  error?: FramingError;
}

/** Where a message body stands. */
type Body = { kind: "length"; remaining: number } | { kind: "chunked"; decoder: ChunkedDecoder };

/**
 * Splits a client's byte stream into requests: each head is checked, stripped of any header
 * named `stampName` and given the `stamp` line instead; bodies are passed through as they come.
 */
export class RequestFramer {
  #phase: "idle" | "head" | "body" = "idle";
  #head = new Uint8Array(1024);
  #headLength = 0;
  #body: Body | null = null;
  #stamp: Uint8Array;
  #stampName: string;
  #maxHeadBytes: number;

  /** `stamp` is one header line with its CRLF; `stampName` its lower-case name. */
  constructor(stamp: string, stampName: string, maxHeadBytes: number) {
    this.#stamp = encoder.encode(stamp);
    this.#stampName = stampName;
    this.#maxHeadBytes = maxHeadBytes;
  }

  /** `idle` between requests, `head` while a head arrives, `body` while a body does. */
  get phase(): "idle" | "head" | "body" {
    return this.#phase;
  }

  /** Whether any byte of the current head has arrived. */
  get partial(): boolean {
    return this.#headLength > 0;
  }

  /** Feeds the next bytes read from the client. */
  push(bytes: Uint8Array): RequestStep {
    const step: RequestStep = { forward: [], heads: [] };
    let at = 0;
    while (at < bytes.length) {
      if (this.#phase === "body") {
        const end = this.#bodyEnd(bytes, at);
        if (typeof end !== "number") {
          step.error = end;
          return step;
        }
        if (end === -1) {
          step.forward.push(bytes.subarray(at));
          return step;
        }
        step.forward.push(bytes.subarray(at, end));
        this.#body = null;
        this.#phase = "idle";
        at = end;
        continue;
      }
      this.#phase = "head";
      const searchFrom = this.#appendHead(bytes, at);
      if (typeof searchFrom !== "number") {
        step.error = searchFrom;
        return step;
      }
      const headEnd = this.#findHeadEnd(searchFrom);
      if (headEnd === -1) {
        if (this.#headLength > this.#maxHeadBytes) {
          step.error = {
            status: 431,
            message: `The request head is larger than ${this.#maxHeadBytes} bytes`,
          };
        }
        return step;
      }
      // The buffer ends where `bytes` ends: what follows the head belongs to its body or to
      // the next request.
      at = bytes.length - (this.#headLength - headEnd);
      const parsed = this.#parseHead(headEnd);
      this.#headLength = 0;
      if ("status" in parsed) {
        step.error = parsed;
        return step;
      }
      step.forward.push(parsed.bytes);
      step.heads.push({ method: parsed.method, target: parsed.target });
      this.#body = parsed.body;
      this.#phase = parsed.body ? "body" : "idle";
    }
    return step;
  }

  /**
   * Appends `bytes[at..]` to the head buffer, dropping the empty lines a client may send
   * before a request line. Returns where to search for the head's end from.
   */
  #appendHead(bytes: Uint8Array, at: number): number | FramingError {
    const start = this.#headLength;
    const need = start + bytes.length - at;
    if (need > this.#head.length) {
      const grown = new Uint8Array(Math.max(need, this.#head.length * 2));
      grown.set(this.#head.subarray(0, start));
      this.#head = grown;
    }
    this.#head.set(bytes.subarray(at), start);
    this.#headLength = need;
    const head = this.#head;
    // A bare CR or LF would end lines for some parsers and not for others: refuse it outright.
    for (let i = Math.max(0, start - 1); i < need; i++) {
      const b = head[i]!;
      // Only the head is held to this: what follows its blank line (a body that arrived in the
      // same packet, e.g. pretty-printed JSON) is the body's business.
      if (b === LF && i >= 3 && head[i - 1] === CR && head[i - 2] === LF && head[i - 3] === CR) break;
      if (b === LF && (i === 0 || head[i - 1] !== CR)) return badRequest("a line ends in a bare LF");
      if (b === CR && i + 1 < need && head[i + 1] !== LF) return badRequest("a bare CR in the head");
    }
    let skip = 0;
    while (skip + 1 < this.#headLength && head[skip] === CR && head[skip + 1] === LF) skip += 2;
    if (skip > 0) {
      head.copyWithin(0, skip, this.#headLength);
      this.#headLength -= skip;
      return 0;
    }
    return Math.max(0, start - 3);
  }

  /** The offset just past the head's CRLF CRLF, or -1. */
  #findHeadEnd(from: number): number {
    const head = this.#head;
    for (let i = from; i + 3 < this.#headLength; i++) {
      if (head[i] === CR && head[i + 1] === LF && head[i + 2] === CR && head[i + 3] === LF) return i + 4;
    }
    return -1;
  }

  #parseHead(
    end: number,
  ): { bytes: Uint8Array; method: string; target: string; body: Body | null } | FramingError {
    const raw = this.#head.subarray(0, end);
    const text = latin1.decode(raw);
    const lineEnd = text.indexOf("\r\n");
    const requestLine = REQUEST_LINE.exec(text.slice(0, lineEnd));
    if (!requestLine) return badRequest("the request line is not METHOD TARGET HTTP/1.1");
    const method = requestLine[1]!;
    const version = `${requestLine[3]}.${requestLine[4]}`;
    if (version !== "1.1" && version !== "1.0") {
      return { status: 505, message: "HTTP Version Not Supported: speak HTTP/1.1" };
    }
    if (method === "CONNECT") return { status: 405, message: "Method Not Allowed: CONNECT is not served" };
    const lengths: string[] = [];
    const codings: string[] = [];
    // Byte ranges of the lines kept, after the request line.
    const kept: [number, number][] = [];
    let dropped = false;
    for (let at = lineEnd + 2; at < end - 2;) {
      const next = text.indexOf("\r\n", at);
      const line = text.slice(at, next);
      if (line[0] === " " || line[0] === "\t") return badRequest("a header line is folded (obs-fold)");
      const colon = line.indexOf(":");
      const name = colon > 0 ? line.slice(0, colon) : "";
      if (!TOKEN.test(name)) return badRequest("a header line has no valid name");
      const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
      if (BAD_VALUE.test(value)) return badRequest(`the header "${name}" holds a control character`);
      const lower = name.toLowerCase();
      if (lower === this.#stampName) {
        dropped = true;
      } else {
        kept.push([at, next + 2]);
        if (lower === "content-length") lengths.push(value);
        else if (lower === "transfer-encoding") codings.push(value);
      }
      at = next + 2;
    }
    let body: Body | null = null;
    if (codings.length > 0) {
      if (lengths.length > 0) return badRequest("both Content-Length and Transfer-Encoding are set");
      if (version === "1.0") return badRequest("Transfer-Encoding is not HTTP/1.0");
      if (codings.length > 1 || codings[0]!.toLowerCase() !== "chunked") {
        return { status: 501, message: "Not Implemented: the only Transfer-Encoding accepted is chunked" };
      }
      body = { kind: "chunked", decoder: new ChunkedDecoder() };
    } else if (lengths.length > 1) {
      return badRequest("Content-Length is set more than once");
    } else if (lengths.length === 1) {
      if (!/^\d{1,15}$/.test(lengths[0]!)) return badRequest("Content-Length is not a decimal number");
      const length = Number(lengths[0]);
      if (length > 0) body = { kind: "length", remaining: length };
    }
    const out = new Uint8Array(end + this.#stamp.length);
    out.set(raw.subarray(0, lineEnd + 2));
    out.set(this.#stamp, lineEnd + 2);
    let length = lineEnd + 2 + this.#stamp.length;
    if (dropped) {
      for (const [from, to] of kept) {
        out.set(raw.subarray(from, to), length);
        length += to - from;
      }
      out.set(raw.subarray(end - 2, end), length);
      length += 2;
    } else {
      out.set(raw.subarray(lineEnd + 2, end), length);
      length += end - lineEnd - 2;
    }
    return { bytes: out.subarray(0, length), method, target: requestLine[2]!, body };
  }

  /** Where the current body ends in `bytes` (from `at`), -1 if past the end, or an error. */
  #bodyEnd(bytes: Uint8Array, at: number): number | FramingError {
    const body = this.#body!;
    if (body.kind === "length") return lengthEnd(body, bytes, at);
    return body.decoder.feed(bytes, at);
  }
}

function badRequest(why: string): FramingError {
  return { status: 400, message: `Bad Request: ${why}` };
}

/**
 * Follows a chunked body (RFC 9112 section 7.1) byte by byte: sizes, data, the CRLF after each
 * chunk, and the trailer section after the last one.
 */
export class ChunkedDecoder {
  #state: "size" | "data" | "data-end" | "trailer" = "size";
  #line = "";
  #lineCr = false;
  #remaining = 0;
  #trailerBytes = 0;

  /** The offset just past the body's end in `bytes` (from `at`), -1 if past the end, or an error. */
  feed(bytes: Uint8Array, at: number): number | FramingError {
    let i = at;
    while (i < bytes.length) {
      if (this.#state === "data") {
        const take = Math.min(this.#remaining, bytes.length - i);
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0) this.#state = "data-end";
        continue;
      }
      const b = bytes[i++]!;
      if (this.#lineCr) {
        if (b !== LF) return badRequest("a bare CR in a chunked body");
        this.#lineCr = false;
        const done = this.#endLine();
        if (done === true) return i;
        if (done !== false) return done;
        continue;
      }
      if (b === CR) {
        this.#lineCr = true;
        continue;
      }
      if (b === LF) return badRequest("a line of a chunked body ends in a bare LF");
      if (this.#state === "data-end") return badRequest("a chunk is longer than its size");
      this.#line += String.fromCharCode(b);
      if (this.#state === "trailer" && ++this.#trailerBytes > MAX_TRAILER_BYTES) {
        return badRequest(`the trailer section is larger than ${MAX_TRAILER_BYTES} bytes`);
      }
      if (this.#line.length > MAX_CHUNK_LINE) return badRequest("a chunk-size line is too long");
    }
    return -1;
  }

  /** Handles the line just ended; true when the body is complete. */
  #endLine(): boolean | FramingError {
    const line = this.#line;
    this.#line = "";
    if (this.#state === "data-end") {
      this.#state = "size";
      return false;
    }
    if (this.#state === "trailer") {
      if (line === "") return true;
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/.test(line) || BAD_VALUE.test(line)) {
        return badRequest("a trailer line is not a header field");
      }
      return false;
    }
    const m = /^([0-9A-Fa-f]{1,12})(;[\x20-\x7e\x80-\xff\t]*)?$/.exec(line);
    if (!m) return badRequest("a chunk size is not hexadecimal");
    this.#remaining = parseInt(m[1]!, 16);
    this.#state = this.#remaining === 0 ? "trailer" : "data";
    return false;
  }
}

/** What feeding bytes to a {@linkcode ResponseFramer} gave. */
export interface ResponseStep {
  /** Responses completed by these bytes. */
  ended: number;
  /** One of them said `Connection: close`: close once these bytes are sent. */
  close: boolean;
  /** The server switched protocols: from here on bytes pass through unframed. */
  upgraded: boolean;
}

/**
 * Follows the server's responses (trusted bytes: the HTTP server behind the guard wrote them)
 * to know when each ends and whether the connection is to close after it. Requests are
 * announced with {@linkcode expect} so responses to HEAD carry no body.
 */
export class ResponseFramer {
  #methods: string[] = [];
  #head = "";
  #body: Body | { kind: "close" } | null = null;
  #closeAfter = false;
  #upgraded = false;

  /** Announces a request sent to the server, in order. */
  expect(method: string): void {
    this.#methods.push(method);
  }

  /** Requests sent whose response has not ended yet. */
  get pending(): number {
    return this.#methods.length + (this.#body ? 1 : 0);
  }

  /** Whether the connection switched protocols (it never becomes idle then). */
  get upgraded(): boolean {
    return this.#upgraded;
  }

  /** Feeds the next bytes the server wrote. */
  push(bytes: Uint8Array): ResponseStep | FramingError {
    const step: ResponseStep = { ended: 0, close: false, upgraded: this.#upgraded };
    let at = 0;
    while (at < bytes.length && !this.#upgraded) {
      if (this.#body) {
        if (this.#body.kind === "close") return step;
        const end = this.#body.kind === "length"
          ? lengthEnd(this.#body, bytes, at)
          : this.#body.decoder.feed(bytes, at);
        if (typeof end !== "number") return { status: 502, message: `Bad response framing: ${end.message}` };
        if (end === -1) return step;
        at = end;
        this.#ended(step);
        continue;
      }
      const text = latin1.decode(bytes.subarray(at));
      const from = Math.max(0, this.#head.length - 3);
      this.#head += text;
      const end = this.#head.indexOf("\r\n\r\n", from);
      if (end === -1) {
        if (this.#head.length > 1024 * 1024) return { status: 502, message: "Bad response: head too large" };
        return step;
      }
      at = bytes.length - (this.#head.length - end - 4);
      const head = this.#head.slice(0, end);
      this.#head = "";
      const started = this.#startBody(head);
      if (typeof started !== "string") return started;
      if (started === "upgraded") step.upgraded = true;
      else if (started === "final" && !this.#body) this.#ended(step);
    }
    return step;
  }

  #ended(step: ResponseStep): void {
    this.#body = null;
    step.ended++;
    if (this.#closeAfter) step.close = true;
    this.#closeAfter = false;
  }

  /** Reads a response head: an interim (1xx) one, a final one, or the switch to another protocol. */
  #startBody(head: string): "interim" | "final" | "upgraded" | FramingError {
    const lines = head.split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (!status) return { status: 502, message: "Bad response: no status line" };
    const code = Number(status[1]);
    let length: number | undefined;
    let chunked = false;
    let close = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.split(",").at(-1)!.trim() === "chunked";
      else if (name === "connection") close ||= value.split(",").some((t) => t.trim() === "close");
    }
    if (code === 101) {
      this.#methods.shift();
      this.#upgraded = true;
      return "upgraded";
    }
    // Other 1xx answers are interim: the final response to the same request follows.
    if (code < 200) return "interim";
    const method = this.#methods.shift() ?? "GET";
    this.#closeAfter = close;
    if (method === "HEAD" || code === 204 || code === 304) this.#body = null;
    else if (chunked) this.#body = { kind: "chunked", decoder: new ChunkedDecoder() };
    else if (length !== undefined && Number.isFinite(length)) {
      this.#body = length > 0 ? { kind: "length", remaining: length } : null;
    } else {
      this.#body = { kind: "close" };
      this.#closeAfter = true;
    }
    return "final";
  }
}

/** Where a body of known length ends in `bytes` (from `at`), or -1 when it goes on past them. */
function lengthEnd(body: { remaining: number }, bytes: Uint8Array, at: number): number {
  const available = bytes.length - at;
  if (available < body.remaining) {
    body.remaining -= available;
    return -1;
  }
  const end = at + body.remaining;
  body.remaining = 0;
  return end;
}
