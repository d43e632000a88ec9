import { DurableObject } from 'cloudflare:workers';
export class RunObject extends DurableObject {}
export default { fetch: () => new Response('x') };
