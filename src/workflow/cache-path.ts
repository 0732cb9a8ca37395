/**
 * Why `path` cannot be a `devbox.cache` path or key file, or undefined when it can: it must name
 * something inside the checkout, so it is relative, without `..`, and plain (no `~`, no NUL).
 * The agent checks the same rule again, since it reads the paths from its environment.
 */
export function cachePathProblem(path: string): string | undefined {
  if (path === "" || path.trim() !== path) return "a cache path must be a non-empty path";
  if (path.includes("\0")) return `cache path "${path}" contains NUL`;
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path) || path.startsWith("\\")) {
    return `cache path "${path}" must be relative to the checkout`;
  }
  if (path.startsWith("~")) return `cache path "${path}" must be inside the checkout, not a home`;
  const parts = path.split(/[\\/]/);
  if (parts.includes(".."))
    return `cache path "${path}" must not contain ".." (stay inside the checkout)`;
  if (parts.every((part) => part === "." || part === "")) {
    return `cache path "${path}" must name something inside the checkout, not the checkout itself`;
  }
  if (parts[0] === ".git") return `cache path "${path}" must not be inside .git`;
  return undefined;
}
