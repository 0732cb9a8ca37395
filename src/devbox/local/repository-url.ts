/** `repository` without the user and password of an http(s) URL; other forms unchanged. */
export function withoutCredentials(repository: string): string {
  if (!/^https?:\/\//.test(repository)) return repository;
  const url = new URL(repository);
  if (url.username === "" && url.password === "") return repository;
  url.username = "";
  url.password = "";
  return url.toString();
}
