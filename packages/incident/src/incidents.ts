/**
 * The incidents `pnpm start` replays, in the order it shows them. Adding one is a module that
 * exports an `Incident` and a line here.
 *
 * @since 0.1.0
 */
import * as CacheStall from "./cacheStall/incident.js"
import type { Incident } from "./Incident.js"
import * as Overload from "./overload/incident.js"
import * as RetryStorm from "./retryStorm/incident.js"

/**
 * @since 0.1.0
 * @category incidents
 */
export const incidents: ReadonlyArray<Incident> = [CacheStall.incident, Overload.incident, RetryStorm.incident]
