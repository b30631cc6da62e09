/**
 * Key names: every key of one circuit (or one budget) is `<prefix>{<name>}:<part>`. The braces
 * are a Redis Cluster hash tag: only `<name>` is hashed, so the keys one Lua script touches
 * together are in one slot (a script's keys must be, on a cluster), and different names spread
 * over the cluster. On one server the braces are plain characters. Keys still start with the
 * prefix, so a SCAN by prefix and ACL key patterns keep working.
 *
 * A prefix that carries a hash tag of its own (`"{app}:"`) still keeps a name's keys together:
 * the first `{...}` of a key is its tag, and every key of a name starts with the same
 * `<prefix>{<name>}`. (It then puts every name in that one slot.)
 *
 * @internal
 */
export const of =
  (prefix: string, name: string) =>
  (part: string): string =>
    `${prefix}{${name}}:${part}`
