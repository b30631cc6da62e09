/** The origin of a request's URL: the default key of the HTTP clients' breakers and limiters. */

/**
 * The request URL's origin, or `undefined` when the URL does not parse (such a request is passed to
 * the client unguarded, which fails it with `RequestError` "InvalidUrl").
 *
 * @internal
 */
export const originKey = (request: { readonly url: string }): string | undefined => {
  try {
    const origin = new URL(request.url).origin
    return origin === "null" ? undefined : origin
  } catch {
    return undefined
  }
}
