/** The same app over a real socket (supertest), to catch what inject cannot: headers on the wire, keep-alive, chunking. */
import type { FastifyInstance } from 'fastify';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await makeTestApp());
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

describe('studies over HTTP (supertest)', () => {
  it('create → get → list → patch → delete', async () => {
    const created = await request(app.server).post('/v1/studies').send(studyBody()).expect(201).expect('content-type', /application\/json/);
    const location = created.headers.location as string;
    expect(location).toBe(`/v1/studies/${created.body.id}`);

    const got = await request(app.server).get(location).expect(200);
    expect(got.body.name).toBe('quadratic');

    const list = await request(app.server).get('/v1/studies').query({ page_size: 10 }).expect(200);
    expect(list.body.studies.map((s: { id: string }) => s.id)).toContain(created.body.id);

    const patched = await request(app.server).patch(location).send({ state: 'PAUSED' }).expect(200);
    expect(patched.body.state).toBe('PAUSED');

    await request(app.server).delete(location).expect(204);
    await request(app.server).get(location).expect(404).expect('content-type', /application\/problem\+json/);
  });

  it('returns problem+json with every issue for an invalid body', async () => {
    const res = await request(app.server).post('/v1/studies').send({ name: 'x', parameters: [] }).expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ path: '/parameters', message: expect.any(String) }] });
  });
});
