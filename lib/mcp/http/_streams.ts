/** Headers of every SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  "Connection": "keep-alive",
  "X-Accel-Buffering": "no",
};

/**
 * The same response with `headers` added and `onDone` called once its body has been sent,
 * failed, or been cancelled by the client (at once when there is no body). Tracking the end
 * of a body is how in-flight calls are counted for idle timeouts and graceful shutdown where the
 * HTTP server does not say when a response is done.
 */
export function finishResponse(
  res: Response,
  headers: Record<string, string>,
  onDone?: () => void,
): Response {
  const merged = new Headers(res.headers);
  for (const [k, v] of Object.entries(headers)) merged.set(k, v);
  const init = { status: res.status, statusText: res.statusText, headers: merged };
  if (!onDone) return new Response(res.body, init);
  if (res.body === null) {
    onDone();
    return new Response(null, init);
  }
  let finished = false;
  const finish = (): void => {
    if (!finished) {
      finished = true;
      onDone();
    }
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          finish();
        } else {
          controller.enqueue(value);
        }
      } catch (e) {
        controller.error(e);
        finish();
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, init);
}
