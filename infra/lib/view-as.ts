/**
 * Views a CDK construct as one of its interfaces. CDK's declarations give class members
 * `T | undefined` where the interfaces say `?: T`, which `exactOptionalPropertyTypes` (on in
 * this repository) refuses to match; the value is that interface all the same.
 */
export function viewAs<Interface>(construct: object): Interface {
  return construct as Interface;
}
