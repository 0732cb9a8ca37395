/**
 * nock 15 (through @mswjs/interceptors 0.44+) calls `Promise.withResolvers`, which Node 20 lacks
 * (it arrived in Node 22). Tests that intercept `fetch` import this first. Test-only: nothing in
 * `src/` relies on it.
 */
interface WithResolvers {
  withResolvers?: <T>() => {
    promise: Promise<T>;
    resolve: (value: T | PromiseLike<T>) => void;
    reject: (reason?: unknown) => void;
  };
}

const PromiseType = Promise as unknown as WithResolvers;
PromiseType.withResolvers ??= <T>() => {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
};
