// The event feed: every change in commit order, with a long poll.
import { EventPage, EventsQuery } from '../../../common/schemas/events.js';
import { endpoint } from '../../http/endpoint.js';
import { eventFeed } from '../../services/events.js';

export const eventEndpoints = [
  endpoint({
    method: 'GET',
    path: '/v1/events',
    summary: 'Events after a cursor, in commit order; `wait` holds the request until one arrives',
    description: "Administrators see every event; project tokens (scope read or publish) their project's.",
    tags: ['events'],
    access: { scope: 'read', purpose: 'reading events', owner: { rule: 'events', doing: 'read events' } },
    query: EventsQuery,
    responses: {
      200: { description: 'The events and the cursor to read on from', schema: EventPage },
      400: { description: 'Invalid cursor, limit, wait or type' },
    },
    handler: async (req, services) => ({ body: await eventFeed(services, req.allowed, req.query, req.signal) }),
  }),
];
