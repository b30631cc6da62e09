// A module resolve hook (registered by child.effect4.mjs): `effect` and `effect/*` are resolved as
// if imported from editions/effect4, so a child process of the Effect 4 run runs effect 4.
const anchor = new URL("../effect4/package.json", import.meta.url).href
const perMajor = /^effect(\/|$)/

export const resolve = (specifier, context, next) =>
  perMajor.test(specifier) ? next(specifier, { ...context, parentURL: anchor }) : next(specifier, context)
