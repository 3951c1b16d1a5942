/**
 * ProbNES Server client for TypeScript / Node ≥ 20: every /v1 route as a typed method over the
 * global fetch, with no runtime dependency. Request and response types come from
 * `schema.d.ts`, generated from openapi/openapi.yaml (`npm run client:types`), so a change of the
 * API shows up here as a type error.
 *
 *   const client = new ProbnesClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 *   const study = await client.createStudy({ name: 'demo', parameters: [{ name: 'x', bounds: [-5, 5] }] });
 *   const result = await client.optimize((p) => (p.x - 1) ** 2, study.id, { budget: 40, workers: 4 });
 *
 * Errors are thrown as ProbnesError, built from the server's application/problem+json (status,
 * code, detail, errors[] with JSON pointers, request_id). Transient failures (no response, 429
 * after its Retry-After, 502/503/504) are retried with jittered exponential backoff; other 4xx and
 * 500 never are. Retrying is safe for every route but creation: a repeated suggestions GET returns
 * the trials the client already holds, a repeated identical observation is a no-op, and
 * heartbeat/fail/abandon are idempotent. Study creation and import are retried only when the
 * server certainly did not act (429, connection refused), so a retry never creates a second study.
 */
import type { components, paths } from './schema.js';

// ---- types from the OpenAPI document -------------------------------------------------------------

type Schemas = components['schemas'];
type Method = 'get' | 'post' | 'patch' | 'delete';
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonBody<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type JsonOk<P extends keyof paths, M extends Method> =
  Op<P, M>['responses'] extends { 200: { content: { 'application/json': infer T } } }
    ? T
    : Op<P, M>['responses'] extends { 201: { content: { 'application/json': infer T } } }
      ? T
      : never;
type Query<P extends keyof paths, M extends Method> = Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Study = Schemas['Study'];
export type Trial = Schemas['Trial'];
export type Problem = Schemas['Problem'];
export type ProblemIssue = NonNullable<Problem['errors']>[number];
export type StudyDocument = Schemas['StudyDocument'];
export type StudyDocumentInput = Schemas['StudyDocumentInput'];
export type StudySpec = JsonBody<'/v1/studies', 'post'>;
export type ParameterSpec = StudySpec['parameters'][number];
export type PriorSpec = NonNullable<StudySpec['prior']>;

/** `prior` fitted to points believed plausible (user units, keyed by parameter name), optionally weighted. */
export function priorFromPoints(points: Record<string, number>[], weights?: number[]): PriorSpec {
  return weights ? { from_points: points, weights } : { from_points: points };
}

/** `prior` warm-started from an earlier study of the same tenant (WS-CMA-ES on its best `topFraction`). */
export function priorFromStudy(studyId: string, opts: { topFraction?: number; alpha?: number; includeObservations?: boolean } = {}): PriorSpec {
  return { from_study: { study_id: studyId, top_fraction: opts.topFraction ?? 0.1, alpha: opts.alpha ?? 0.1, include_observations: opts.includeObservations ?? false } };
}
export type StudyUpdate = JsonBody<'/v1/studies/{study_id}', 'patch'>;
export type StudyPage = JsonOk<'/v1/studies', 'get'>;
export type TrialPage = JsonOk<'/v1/studies/{study_id}/trials', 'get'>;
export type TrialState = Trial['state'];
export type Suggestions = JsonOk<'/v1/studies/{study_id}/suggestions', 'get'>;
export type StopReason = NonNullable<Suggestions['reason']>;
/** With reason max_trials_reached: the leases that hold the rest of max_trials (docs/limits.md). */
export type SuggestionBudget = NonNullable<Suggestions['budget']>;
export type Observation = JsonBody<'/v1/studies/{study_id}/observations', 'post'>['observations'][number];
export type ObservationResult = JsonOk<'/v1/studies/{study_id}/observations', 'post'>;
export type Best = JsonOk<'/v1/studies/{study_id}/best', 'get'>;
/** One page of the Pareto front of the feasible COMPLETED trials, with its reference point and hypervolume. */
export type FrontPage = JsonOk<'/v1/studies/{study_id}/front', 'get'>;
/** One page of the front's history: the hypervolume and the front's size after each COMPLETED trial. */
export type FrontHistoryPage = JsonOk<'/v1/studies/{study_id}/front/history', 'get'>;
export type FrontHistoryPoint = FrontHistoryPage['points'][number];
/** An objective of a study: its name and direction. */
export type ObjectiveSpec = NonNullable<StudySpec['objectives']>[number];
/** A constraint of a study, by name: a point is feasible when every constraint's value is ≤ 0. */
export type ConstraintSpec = NonNullable<StudySpec['constraints']>[number];
export type History = JsonOk<'/v1/studies/{study_id}/history', 'get'>;
export type Distribution = JsonOk<'/v1/studies/{study_id}/distribution', 'get'>;
export type Health = JsonOk<'/healthz', 'get'>;
/** The answer to an intermediate value: should the trial stop, and why (docs/early-stopping.md). */
export type StopDecision = JsonOk<'/v1/studies/{study_id}/trials/{trial_id}/intermediate', 'post'>;
export type IntermediateValues = JsonOk<'/v1/studies/{study_id}/intermediate_values', 'get'>;
export type Readiness = JsonOk<'/readyz', 'get'>;
export type MethodList = JsonOk<'/v1/methods', 'get'>;
/** One method the server runs, with the facts a client needs (GET /v1/methods). */
export type MethodInfo = MethodList['methods'][number];
/** A point in user units, by parameter name (int parameters arrive rounded). */
export type Parameters = Trial['parameters'];
/** One parameter's value: a number, or a categorical parameter's choice (a string, number or boolean, as given). */
export type ParamValue = Parameters[string];

/** Whether a parameter (of a specification or of a study) is numeric (float or int) rather than categorical. */
export function isNumericParameter<T extends { type?: string }>(p: T): p is Exclude<T, { type: 'categorical' }> {
  return p.type !== 'categorical';
}

/**
 * A point of a study whose parameters are all numeric, typed as numbers (for objectives and helpers
 * written for numbers); throws a TypeError naming a parameter whose value is a categorical choice.
 */
export function numericParameters(p: Readonly<Record<string, ParamValue>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(p)) {
    if (typeof v !== 'number') throw new TypeError(`parameter ${k} is not numeric (${JSON.stringify(v)})`);
    out[k] = v;
  }
  return out;
}

// ---- errors ------------------------------------------------------------------------------------

/** An error answer (problem+json), or no answer at all (status null, code `connection_failed`). */
export class ProbnesError extends Error {
  override readonly name = 'ProbnesError';
  readonly status: number | null;
  readonly code: string;
  readonly detail: string;
  /** Each issue with its JSON pointer (`path`), for validation_failed. */
  readonly errors: ProblemIssue[];
  readonly requestId: string | undefined;
  /** Retry-After in milliseconds, when the server sent one (429). */
  readonly retryAfterMs: number | undefined;
  readonly problem: Partial<Problem>;
  /** False only when the request certainly never reached the server (connection refused). */
  readonly sent: boolean;

  constructor(init: { status: number | null; code: string; detail: string; problem?: Partial<Problem>; retryAfterMs?: number; sent?: boolean; cause?: unknown }) {
    super(`${init.status ?? 'no response'} ${init.code}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.problem = init.problem ?? {};
    this.errors = Array.isArray(this.problem.errors) ? this.problem.errors : [];
    this.requestId = typeof this.problem.request_id === 'string' ? this.problem.request_id : undefined;
    this.retryAfterMs = init.retryAfterMs;
    this.sent = init.sent ?? true;
  }

  /** Worth retrying: no response, rate limited, or a gateway/unavailable answer. */
  get transient(): boolean {
    return this.status === null || this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const when = Date.parse(value);
  return Number.isNaN(when) ? undefined : Math.max(0, when - now);
}

async function errorFrom(res: Response): Promise<ProbnesError> {
  const text = await res.text().catch(() => '');
  let problem: Partial<Problem> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) problem = parsed as Partial<Problem>;
  } catch {
    // not JSON (a proxy's HTML page): keep the text as the detail
  }
  const code = typeof problem.code === 'string' ? problem.code : res.status >= 500 ? 'internal_error' : 'http_error';
  const detail = typeof problem.detail === 'string' ? problem.detail : text.slice(0, 200) || `HTTP ${res.status}`;
  return new ProbnesError({ status: res.status, code, detail, problem, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) });
}

/** undici reports a failed connection as TypeError('fetch failed') with the system error as cause. */
function connectionError(err: unknown, what: string): ProbnesError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  const message = cause?.message ?? (err as Error).message;
  return new ProbnesError({ status: null, code: 'connection_failed', detail: `${what}: ${message}`, sent: code !== 'ECONNREFUSED', cause: err });
}

/**
 * One trial as its worker uses it:
 *
 *   const t = client.trialHandle(studyId, trial, 'w1');
 *   for (let epoch = 0; epoch < 50; epoch++) {
 *     loss = await trainOneEpoch(t.parameters);
 *     if (await t.report(epoch, loss)) return t.stop(loss);   // the study's stopping rule says stop
 *   }
 *   await t.complete(loss);
 */
export class TrialHandle {
  /** The last report's answer (should_stop, reason, detail, median). */
  last: StopDecision | null = null;
  readonly trialId: number;
  readonly parameters: Parameters;

  constructor(
    private readonly client: ProbnesClient,
    readonly studyId: string,
    trial: Trial,
    readonly clientId?: string,
  ) {
    this.trialId = trial.trial_id;
    this.parameters = { ...trial.parameters };
  }

  /** Reports `value` at `step`; true when the trial should stop. */
  async report(step: number, value: number): Promise<boolean> {
    this.last = await this.client.report(this.studyId, this.trialId, step, value);
    return this.last.should_stop;
  }

  /** The trial stopped early with its last value: COMPLETED, counted as an observation of that value. */
  stop(value: number): Promise<ObservationResult> {
    return this.client.stop(this.studyId, this.trialId, value);
  }

  complete(value: number, stderr?: number): Promise<ObservationResult> {
    return this.client.observeOne(this.studyId, this.trialId, value, stderr);
  }

  /** The result of a study of several objectives (`values` in the study's order), with `constraints` when it declares them. */
  completeValues(values: readonly number[], constraints?: readonly number[]): Promise<ObservationResult> {
    return this.client.observeValues(this.studyId, this.trialId, values, constraints);
  }

  /** The point cannot be evaluated (diverged, out of memory): COMPLETED with no value; the methods move away from it. */
  infeasible(): Promise<ObservationResult> {
    return this.client.observeInfeasible(this.studyId, this.trialId);
  }

  fail(reason: string): Promise<Trial> {
    return this.client.failTrial(this.studyId, this.trialId, reason, this.clientId);
  }
}

// ---- the client --------------------------------------------------------------------------------

export interface ClientOptions {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit when the server runs open. */
  apiKey?: string;
  /** Per attempt, in ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt for transient failures (default 5). */
  maxRetries?: number;
  /** First backoff ceiling in ms, doubled per retry (default 200). */
  backoffMs?: number;
  /** Largest backoff ceiling in ms (default 10 000). */
  maxBackoffMs?: number;
  /** Longest Retry-After honoured, in ms (default 60 000). */
  maxRetryAfterMs?: number;
  userAgent?: string;
  /** For tests and instrumentation; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** False for creation: then only 429 and a refused connection are retried. */
  idempotent?: boolean;
  signal?: AbortSignal;
}

type Awaitable<T> = T | Promise<T>;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const seg = (s: string): string => encodeURIComponent(s);
const tid = (n: number): string => {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`trial id must be a positive integer, got ${n}`);
  return String(n);
};

export class ProbnesClient {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly userAgent: string;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxRetries = opts.maxRetries ?? 5;
    this.backoffMs = opts.backoffMs ?? 200;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10_000;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
    this.userAgent = opts.userAgent ?? 'probnes-typescript-client/0.1';
    this.fetchImpl = opts.fetch ?? fetch;
  }

  // -- transport --

  private async once(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body, (_k, v: unknown) => {
        // The server accepts finite numbers only; JSON.stringify would silently send null.
        if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError(`${method} ${path}: body contains ${v}`);
        return v;
      });
      headers['content-type'] = 'application/json';
    }
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await this.fetchImpl(url, { method, headers, body, signal });
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw connectionError(err, `${method} ${url.pathname}`);
    }
    if (!res.ok) throw await errorFrom(res);
    return res;
  }

  private delay(attempt: number, err: ProbnesError): number {
    if (err.retryAfterMs !== undefined) return Math.min(err.retryAfterMs, this.maxRetryAfterMs);
    // Full jitter keeps many workers from retrying in lockstep.
    return Math.random() * Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
  }

  /** One API call with retries; the Response of the successful attempt. */
  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const idempotent = opts.idempotent ?? true;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(method, path, opts);
      } catch (err) {
        if (!(err instanceof ProbnesError)) throw err;
        const certainlyNotActed = err.status === 429 || (err.status === null && !err.sent);
        if (!err.transient || !(idempotent || certainlyNotActed) || attempt >= this.maxRetries) throw err;
        await sleep(this.delay(attempt, err), opts.signal);
      }
    }
  }

  /** One API call with retries; parsed JSON (undefined for 204). */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw(method, path, opts);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  // -- studies --

  createStudy(spec: StudySpec, signal?: AbortSignal): Promise<Study> {
    return this.request('POST', '/v1/studies', { body: spec, idempotent: false, signal });
  }

  listStudies(q: { pageSize?: number; pageToken?: string } = {}): Promise<StudyPage> {
    const query: Query<'/v1/studies', 'get'> = { page_size: q.pageSize, page_token: q.pageToken };
    return this.request('GET', '/v1/studies', { query });
  }

  async *iterStudies(pageSize = 100): AsyncGenerator<Study> {
    let pageToken: string | undefined;
    do {
      const page = await this.listStudies({ pageSize, pageToken });
      yield* page.studies;
      pageToken = page.next_page_token ?? undefined;
    } while (pageToken);
  }

  /**
   * The methods the server runs and what a client needs to know about each (whether it ranks a
   * generation, keeps a search distribution, fits a model; its smallest batch_size), the default first.
   */
  listMethods(signal?: AbortSignal): Promise<MethodList> {
    return this.request('GET', '/v1/methods', { signal });
  }

  getStudy(studyId: string, signal?: AbortSignal): Promise<Study> {
    return this.request('GET', `/v1/studies/${seg(studyId)}`, { signal });
  }

  /** Rename, replace metadata, or change state (ACTIVE ⇄ PAUSED, → COMPLETED). */
  updateStudy(studyId: string, patch: StudyUpdate): Promise<Study> {
    return this.request('PATCH', `/v1/studies/${seg(studyId)}`, { body: patch });
  }

  async deleteStudy(studyId: string): Promise<void> {
    await this.request('DELETE', `/v1/studies/${seg(studyId)}`);
  }

  // -- the loop --

  /** The next points; a client that holds ACTIVE trials gets those back first. */
  suggest(studyId: string, opts: { count?: number; clientId?: string; signal?: AbortSignal } = {}): Promise<Suggestions> {
    const query: Query<'/v1/studies/{study_id}/suggestions', 'get'> = { count: opts.count, client_id: opts.clientId };
    return this.request('GET', `/v1/studies/${seg(studyId)}/suggestions`, { query, signal: opts.signal });
  }

  /** Atomic batch: by trial_id for suggested points, by parameters for points evaluated elsewhere. */
  observe(studyId: string, observations: Observation[], signal?: AbortSignal): Promise<ObservationResult> {
    return this.request('POST', `/v1/studies/${seg(studyId)}/observations`, { body: { observations }, signal });
  }

  observeOne(studyId: string, trialId: number, value: number, stderr?: number, signal?: AbortSignal): Promise<ObservationResult> {
    return this.observe(studyId, [stderr === undefined ? { trial_id: trialId, value } : { trial_id: trialId, value, stderr }], signal);
  }

  /**
   * One result of a study of several objectives: `values`, one per objective in the study's order (a
   * one-element `values` for one objective), and `constraints`, one per declared constraint (feasible when
   * every one is ≤ 0). The server checks the counts and answers a 400 at the field's JSON pointer.
   */
  observeValues(studyId: string, trialId: number, values: readonly number[], constraints?: readonly number[], signal?: AbortSignal): Promise<ObservationResult> {
    const obs: Observation = constraints === undefined ? { trial_id: trialId, values: [...values] } : { trial_id: trialId, values: [...values], constraints: [...constraints] };
    return this.observe(studyId, [obs], signal);
  }

  /** The point cannot be evaluated (training diverged, out of memory): COMPLETED with `infeasible: true` and no value. */
  observeInfeasible(studyId: string, trialId: number, signal?: AbortSignal): Promise<ObservationResult> {
    return this.observe(studyId, [{ trial_id: trialId, infeasible: true }], signal);
  }

  // -- early stopping --

  /**
   * A running trial's value at `step`; the answer says whether to stop (`should_stop`) by the study's
   * stopping rule. One value per step: repeating a report is answered again, another value for the
   * step is a 409. A trial that stops is reported with `stop()`.
   */
  report(studyId: string, trialId: number, step: number, value: number, signal?: AbortSignal): Promise<StopDecision> {
    return this.request('POST', `/v1/studies/${seg(studyId)}/trials/${tid(trialId)}/intermediate`, { body: { step, value }, signal });
  }

  /** Reports the trial stopped early with its last value: COMPLETED, counted as an observation of that value. */
  stop(studyId: string, trialId: number, value: number, signal?: AbortSignal): Promise<ObservationResult> {
    return this.observe(studyId, [{ trial_id: trialId, value, stopped: true }], signal);
  }

  /**
   * One page of the curves: at most `pageSize` values (server default 1000, at most 10 000) in
   * (trial id, step) order. A curve longer than the rest of the page continues on the next page,
   * which then starts with the same trial_id.
   */
  listIntermediateValues(studyId: string, q: { pageSize?: number; pageToken?: string } = {}, signal?: AbortSignal): Promise<IntermediateValues> {
    const query: Query<'/v1/studies/{study_id}/intermediate_values', 'get'> = { page_size: q.pageSize, page_token: q.pageToken };
    return this.request('GET', `/v1/studies/${seg(studyId)}/intermediate_values`, { query, signal });
  }

  /**
   * Every trial's intermediate values (the curves), by trial id: the server answers in pages of at
   * most `pageSize` values (each O(page) for it); they are followed here, and a curve split across
   * two pages is joined again.
   */
  async intermediateValues(studyId: string, opts: { pageSize?: number; signal?: AbortSignal } = {}): Promise<IntermediateValues> {
    const trials: IntermediateValues['trials'] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.listIntermediateValues(studyId, { pageSize: opts.pageSize ?? 10_000, pageToken }, opts.signal);
      for (const c of page.trials) {
        const last = trials[trials.length - 1];
        if (last?.trial_id === c.trial_id) last.intermediate_values.push(...c.intermediate_values);
        else trials.push(c);
      }
      pageToken = page.next_page_token ?? undefined;
    } while (pageToken);
    return { trials, next_page_token: null };
  }

  /** A handle on one trial for the worker evaluating it: report(step, value) → whether to stop, then stop/complete/fail. */
  trialHandle(studyId: string, trial: Trial, clientId?: string): TrialHandle {
    return new TrialHandle(this, studyId, trial, clientId);
  }

  // -- trials --

  listTrials(studyId: string, q: { state?: TrialState; pageSize?: number; pageToken?: string } = {}): Promise<TrialPage> {
    const query: Query<'/v1/studies/{study_id}/trials', 'get'> = { state: q.state, page_size: q.pageSize, page_token: q.pageToken };
    return this.request('GET', `/v1/studies/${seg(studyId)}/trials`, { query });
  }

  async *iterTrials(studyId: string, state?: TrialState, pageSize = 500): AsyncGenerator<Trial> {
    let pageToken: string | undefined;
    do {
      const page = await this.listTrials(studyId, { state, pageSize, pageToken });
      yield* page.trials;
      pageToken = page.next_page_token ?? undefined;
    } while (pageToken);
  }

  getTrial(studyId: string, trialId: number): Promise<Trial> {
    return this.request('GET', `/v1/studies/${seg(studyId)}/trials/${tid(trialId)}`);
  }

  heartbeat(studyId: string, trialId: number, clientId?: string, signal?: AbortSignal): Promise<Trial> {
    return this.request('POST', `/v1/studies/${seg(studyId)}/trials/${tid(trialId)}/heartbeat`, { body: clientId === undefined ? {} : { client_id: clientId }, signal });
  }

  failTrial(studyId: string, trialId: number, reason: string, clientId?: string, signal?: AbortSignal): Promise<Trial> {
    const body: JsonBody<'/v1/studies/{study_id}/trials/{trial_id}/fail', 'post'> = clientId === undefined ? { reason } : { reason, client_id: clientId };
    return this.request('POST', `/v1/studies/${seg(studyId)}/trials/${tid(trialId)}/fail`, { body, signal });
  }

  abandonTrial(studyId: string, trialId: number, clientId?: string, signal?: AbortSignal): Promise<Trial> {
    return this.request('POST', `/v1/studies/${seg(studyId)}/trials/${tid(trialId)}/abandon`, { body: clientId === undefined ? {} : { client_id: clientId }, signal });
  }

  // -- results --

  best(studyId: string): Promise<Best> {
    return this.request('GET', `/v1/studies/${seg(studyId)}/best`);
  }

  /**
   * The whole history: the server answers it in pages (each O(page) for it); they are followed and
   * merged here. `stride` downsamples the evaluations, keeping every best-so-far step.
   */
  async history(studyId: string, opts: { stride?: number } = {}): Promise<History> {
    return merged<History>((token) => this.request('GET', `/v1/studies/${seg(studyId)}/history`, { query: { page_size: 10_000, stride: opts.stride, page_token: token } }), 'evaluations', 'generations');
  }

  // -- several objectives: the front --

  /**
   * One page of the Pareto front of the feasible COMPLETED trials (no other feasible trial is at least as
   * good in every objective and better in one), ordered by the first objective's loss, with the reference
   * point (`reference_point.value`, `.derived`), the front's `hypervolume` against it, `evaluation_count`
   * and `feasible_count`. For one objective the front is the best trial.
   */
  frontPage(studyId: string, q: { pageSize?: number; pageToken?: string } = {}, signal?: AbortSignal): Promise<FrontPage> {
    const query: Query<'/v1/studies/{study_id}/front', 'get'> = { page_size: q.pageSize, page_token: q.pageToken };
    return this.request('GET', `/v1/studies/${seg(studyId)}/front`, { query, signal });
  }

  /** The front's trials, following every page. */
  async *iterFront(studyId: string, pageSize = 500): AsyncGenerator<Trial> {
    for await (const page of pages((pageToken) => this.frontPage(studyId, { pageSize, pageToken }))) yield* page.trials;
  }

  /**
   * The whole front: the first page's answer with the trials of every page. Which trials are on it is the
   * server's decision, from their losses; the client never compares values or reads directions.
   */
  async front(studyId: string, opts: { pageSize?: number; signal?: AbortSignal } = {}): Promise<FrontPage> {
    return merged((pageToken) => this.frontPage(studyId, { pageSize: opts.pageSize ?? 500, pageToken }, opts.signal), 'trials');
  }

  /**
   * One page of the front's history: after each COMPLETED trial in completion order, the hypervolume of the
   * front of the feasible trials so far against one reference point (so the curve never falls), and its size.
   */
  frontHistoryPage(studyId: string, q: { pageSize?: number; pageToken?: string } = {}, signal?: AbortSignal): Promise<FrontHistoryPage> {
    const query: Query<'/v1/studies/{study_id}/front/history', 'get'> = { page_size: q.pageSize, page_token: q.pageToken };
    return this.request('GET', `/v1/studies/${seg(studyId)}/front/history`, { query, signal });
  }

  /** The history's points, following every page. */
  async *iterFrontHistory(studyId: string, pageSize = 1000): AsyncGenerator<FrontHistoryPoint> {
    for await (const page of pages((pageToken) => this.frontHistoryPage(studyId, { pageSize, pageToken }))) yield* page.points;
  }

  /** The whole history of the front: the first page's answer with the points of every page. */
  async frontHistory(studyId: string, opts: { pageSize?: number; signal?: AbortSignal } = {}): Promise<FrontHistoryPage> {
    return merged((pageToken) => this.frontHistoryPage(studyId, { pageSize: opts.pageSize ?? 1000, pageToken }, opts.signal), 'points');
  }

  distribution(studyId: string): Promise<Distribution> {
    return this.request('GET', `/v1/studies/${seg(studyId)}/distribution`);
  }

  exportStudy(studyId: string): Promise<StudyDocument> {
    return this.request('GET', `/v1/studies/${seg(studyId)}/export`);
  }

  /** A new study (new id, your tenant) that continues exactly where the exported one was. */
  importStudy(document: StudyDocumentInput): Promise<Study> {
    return this.request('POST', '/v1/studies/import', { body: document, idempotent: false });
  }

  // -- operations --

  healthz(): Promise<Health> {
    return this.request('GET', '/healthz');
  }

  readyz(): Promise<Readiness> {
    return this.request('GET', '/readyz');
  }

  async metrics(): Promise<string> {
    return (await this.raw('GET', '/metrics')).text();
  }

  // -- parallel optimisation --

  /**
   * Evaluate up to `budget` points with `workers` concurrent workers, each with its own client id
   * (`<clientIdPrefix>-<i>`): suggest one point → objective(parameters) → observe. `study` is an id,
   * or a specification to create first (for a method that ranks a generation, `ranks_generation` in
   * GET /v1/methods, without a batch_size, it gets batch_size = workers when that is above the
   * default, see batchForWorkers); a study of such a method whose batch_size is below `workers` gets one warning (`onWarning`, default console.warn). An objective that throws, or returns a non-finite value,
   * marks the trial FAILED with the reason (it still uses budget, so an always-failing objective
   * ends). While an evaluation runs its lease is extended by heartbeats (the objective must yield to
   * the event loop for them to be sent: an async objective, or one that runs elsewhere). Stops early
   * when the server hands out no more points (study completed or paused, max_trials reached once
   * no other worker still holds a point that could fail and free its slot), or when `signal` aborts
   * (points being evaluated are abandoned, so the server hands them out again).
   */
  optimize<P = Parameters>(objective: Objective<P>, study: string | StudySpec, opts: OptimizeOptions): Promise<OptimizeResult> {
    return new Optimizer(this, objective as Objective, study, opts).run();
  }
}

// ---- optimize() --------------------------------------------------------------------------------

export interface EvaluationContext {
  trial: Trial;
  clientId: string;
  /** Aborted when the run is aborted: a long objective may stop early (its result is discarded). */
  signal: AbortSignal;
}

/**
 * What an objective returns: a number (one objective), an array of numbers (several objectives, in the
 * study's order), or the observation's fields: `{ values, constraints }`, `{ value, constraints }`, or
 * `{ infeasible: true }` for a point that cannot be evaluated (no value). Every number must be finite.
 */
export type ObjectiveResult =
  | number
  | readonly number[]
  | { value?: number; values?: readonly number[]; constraints?: readonly number[]; stderr?: number; infeasible?: boolean };

/**
 * Returns the result to report (ObjectiveResult); may be async. `P` lets the objective take its own
 * parameter type (`optimize<MyParams>(…)`); the server hands out exactly the study's parameter
 * names, so it is the caller's word that `P` matches them.
 */
export type Objective<P = Parameters> = (parameters: P, context: EvaluationContext) => Awaitable<ObjectiveResult>;

type ResultFields = Omit<Observation, 'trial_id' | 'parameters'>;

/** An objective's result as an observation's fields, or why it cannot be one (the trial then fails). */
export function resultFields(r: unknown): { fields: ResultFields } | { reason: string } {
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const list = (v: unknown): v is number[] => Array.isArray(v) && v.every(finite);
  if (typeof r === 'number') return finite(r) ? { fields: { value: r } } : { reason: `objective returned ${String(r)}` };
  if (Array.isArray(r)) return list(r) ? { fields: { values: [...r] } } : { reason: `objective returned values [${r.map(String).join(', ')}]` };
  if (r === null || typeof r !== 'object') return { reason: `objective returned ${r === null ? 'null' : typeof r}` };
  const o = r as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !['value', 'values', 'constraints', 'stderr', 'infeasible'].includes(k));
  if (unknown.length > 0) return { reason: `objective returned unknown fields ${unknown.join(', ')}` };
  if (o.infeasible === true) return { fields: { infeasible: true } };
  const fields: Record<string, unknown> = {};
  for (const k of ['value', 'stderr'] as const) {
    if (o[k] === undefined) continue;
    if (!finite(o[k])) return { reason: `objective returned ${k} ${String(o[k])}` };
    fields[k] = o[k];
  }
  for (const k of ['values', 'constraints'] as const) {
    if (o[k] === undefined) continue;
    if (!list(o[k])) return { reason: `objective returned ${k} ${JSON.stringify(o[k])}` };
    fields[k] = [...(o[k] as number[])];
  }
  return { fields: fields as ResultFields };
}

export interface Progress {
  /** Results reported (completed + failed) so far in this run. */
  done: number;
  budget: number;
  clientId: string;
  trialId: number;
  parameters: Parameters;
  /** null when the evaluation failed (see failureReason), was infeasible, or has several objectives. */
  value: number | null;
  /** The objectives' values as the server keeps them (several objectives; [value] for one); null without a result. */
  values: number[] | null;
  /** The objective reported the point infeasible (no value). */
  infeasible: boolean;
  failureReason: string | null;
  /**
   * Best feasible value reported in this run so far (by the server's loss: lower is better); null for several
   * objectives, which have no single best (the result's `best` gives the front's size and hypervolume).
   */
  best: number | null;
  elapsedMs: number;
}

export interface OptimizeOptions {
  budget: number;
  /** Concurrent workers, each with its own client id (default 4). */
  workers?: number;
  clientIdPrefix?: string;
  /** Lease extension period; default a third of the study's lease_seconds; 0 disables. */
  heartbeatSeconds?: number;
  onProgress?: (p: Progress) => void;
  /** Where the one warning about a batch_size below `workers` (see batchWarning) goes (default console.warn). */
  onWarning?: (message: string) => void;
  signal?: AbortSignal;
}

/** The server's batch_size when a specification gives none, and its largest. */
const SERVER_DEFAULT_BATCH = 3;
const MAX_BATCH = 100;
/**
 * Whether `method` (the server's default when undefined) ranks a generation and updates from its
 * batch_size results only, by the server's list of methods (GET /v1/methods, `ranks_generation`):
 * points handed out beyond the generation are lost to it. The others learn from every result.
 */
function ranksGeneration(method: string | undefined, methods: readonly MethodInfo[]): boolean {
  const name = method ?? methods.find((m) => m.default)?.name;
  return methods.some((m) => m.name === name && m.ranks_generation);
}

/**
 * A specification to create for `workers` workers, given the server's methods (`listMethods()`).
 * For a method that ranks a generation without a batch_size of its own: batch_size = workers (at
 * most the server's 100) when that is more than the server's default 3, so every worker has a point
 * of the generation instead of an extra whose result the update never uses. ProbNES (the default
 * method) learns from every result and, with asynchronous workers, did better with the default
 * batch_size than with batch_size = workers, so its specification is left as it is; so is a
 * batch_size the caller chose. (The project's docs/parallel-workers.md has the figures.)
 */
export function batchForWorkers(spec: StudySpec, workers: number, methods: readonly MethodInfo[]): StudySpec {
  if (spec.batch_size !== undefined || workers <= SERVER_DEFAULT_BATCH || !ranksGeneration(spec.method, methods)) return spec;
  return { ...spec, batch_size: Math.min(workers, MAX_BATCH) };
}

/**
 * The warning optimize() gives once when a study of a method that ranks a generation (by the
 * server's `methods`) has a batch_size below the number of workers; null otherwise.
 */
export function batchWarning(study: Pick<Study, 'id' | 'method' | 'batch_size'>, workers: number, methods: readonly MethodInfo[]): string | null {
  if (study.batch_size >= workers || !ranksGeneration(study.method, methods)) return null;
  return (
    `probnes-client: study ${study.id} (${study.method}) has batch_size ${study.batch_size} but optimize() runs ${workers} workers: ` +
    `the workers beyond the generation get extras from the same search distribution, and ${study.method} updates from batch_size results only, ` +
    `so the extras' evaluations are wasted. Create the study with batch_size >= ${workers} (optimize() does when it creates the study), or run ${study.batch_size} workers.`
  );
}

export interface OptimizeResult {
  study: Study;
  completed: number;
  failed: number;
  /** null: the budget was used; else the server's reason, or 'aborted'. */
  stoppedReason: StopReason | 'no_trials' | 'aborted' | null;
  /** GET /best at the end. */
  best: Best;
  elapsedMs: number;
  /** Results per client id. */
  byClient: Record<string, number>;
}

class Optimizer {
  private reserved = 0;
  private completed = 0;
  private failed = 0;
  private inflight = 0;
  private stopped = false;
  private stoppedReason: OptimizeResult['stoppedReason'] = null;
  private bestValue: number | null = null;
  /** The best value's loss (the server orients it: lower is better, whatever the direction). */
  private bestLoss: number | null = null;
  private readonly byClient: Record<string, number> = {};
  private readonly t0 = performance.now();
  private readonly abort = new AbortController();
  private readonly workers: number;
  private readonly prefix: string;
  private methodList: Promise<readonly MethodInfo[]> | null = null;

  constructor(
    private readonly c: ProbnesClient,
    private readonly objective: Objective,
    private readonly study: string | StudySpec,
    private readonly opts: OptimizeOptions,
  ) {
    this.workers = opts.workers ?? 4;
    this.prefix = opts.clientIdPrefix ?? 'worker';
    if (!Number.isSafeInteger(opts.budget) || opts.budget < 0) throw new RangeError(`budget must be an integer >= 0, got ${opts.budget}`);
    if (!Number.isSafeInteger(this.workers) || this.workers < 1) throw new RangeError(`workers must be an integer >= 1, got ${this.workers}`);
  }

  async run(): Promise<OptimizeResult> {
    const outer = this.opts.signal;
    const onAbort = (): void => this.stop('aborted');
    if (outer?.aborted) onAbort();
    outer?.addEventListener('abort', onAbort, { once: true });
    try {
      const study = typeof this.study === 'string' ? await this.c.getStudy(this.study) : await this.c.createStudy(await this.specFor(this.study));
      const warning = study.batch_size < this.workers ? batchWarning(study, this.workers, await this.methods()) : null;
      if (warning) (this.opts.onWarning ?? console.warn)(warning);
      const beat = this.opts.heartbeatSeconds ?? study.lease_seconds / 3;
      const results = await Promise.allSettled(
        Array.from({ length: this.workers }, (_, i) => this.worker(study.id, `${this.prefix}-${i}`, beat)),
      );
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
      return {
        study: await this.c.getStudy(study.id),
        completed: this.completed,
        failed: this.failed,
        stoppedReason: this.stoppedReason,
        best: await this.c.best(study.id),
        elapsedMs: performance.now() - this.t0,
        byClient: { ...this.byClient },
      };
    } finally {
      outer?.removeEventListener('abort', onAbort);
    }
  }

  /** The specification to create: batchForWorkers's, asking the server for its methods only when the batch_size could change. */
  private async specFor(spec: StudySpec): Promise<StudySpec> {
    return spec.batch_size === undefined && this.workers > SERVER_DEFAULT_BATCH ? batchForWorkers(spec, this.workers, await this.methods()) : spec;
  }

  /** The server's methods (GET /v1/methods), read once; none from a server older than that route. */
  private methods(): Promise<readonly MethodInfo[]> {
    this.methodList ??= this.c.listMethods().then(
      (r) => r.methods,
      (err: unknown) => {
        if (err instanceof ProbnesError && err.status === 404) return [];
        throw err;
      },
    );
    return this.methodList;
  }

  private stop(reason: OptimizeResult['stoppedReason']): void {
    this.stoppedReason ??= reason;
    this.stopped = true;
    if (reason === 'aborted') this.abort.abort(this.opts.signal?.reason);
  }

  private async worker(studyId: string, clientId: string, heartbeatSeconds: number): Promise<void> {
    try {
      // One event loop: the counters below change only between awaits, so they need no lock.
      while (!this.stopped && this.reserved < this.opts.budget) {
        this.reserved++;
        const resultsBefore = this.completed + this.failed;
        // Busy from the ask on: the server counts a point against max_trials from the moment it
        // hands it out, before this worker's continuation runs.
        this.inflight++;
        let got: Awaited<ReturnType<ProbnesClient['suggest']>>;
        try {
          // Not cancelled by an abort: the server may lease a point to this client id, which the
          // check below then abandons instead of leaving it leased until it expires.
          got = await this.c.suggest(studyId, { count: 1, clientId });
          const trial = got.trials[0];
          if (trial && this.stopped) {
            // Aborted while the suggestion was on its way: give the point back.
            await this.c.abandonTrial(studyId, trial.trial_id, clientId).catch(() => undefined);
            return;
          }
          if (trial) {
            await this.evaluate(studyId, clientId, trial, heartbeatSeconds);
            continue;
          }
        } finally {
          this.inflight--;
        }
        this.reserved--;
        const reason = got.reason ?? 'no_trials';
        // Another worker is asking or evaluating, or a point failed while we asked (its slot was
        // freed after the server counted it): its outcome may free a slot, so wait for it.
        const othersBusy = this.inflight > 0 || this.completed + this.failed !== resultsBefore;
        if (reason === 'max_trials_reached' && othersBusy && !this.stopped) {
          await sleep(50, this.abort.signal);
          continue;
        }
        this.stop(reason);
        return;
      }
    } catch (err) {
      if (this.abort.signal.aborted && err === this.abort.signal.reason) return;
      this.stopped = true; // a permanent error: the others finish their current point and stop
      throw err;
    }
  }

  private async evaluate(studyId: string, clientId: string, trial: Trial, heartbeatSeconds: number): Promise<void> {
    const id = trial.trial_id;
    const beat = heartbeatSeconds > 0
      ? setInterval(() => {
          // Best effort: the result is still accepted after the lease expires.
          this.c.heartbeat(studyId, id, clientId).catch(() => undefined);
        }, heartbeatSeconds * 1000)
      : undefined;
    let fields: ResultFields | null = null;
    let reason: string | null = null;
    try {
      const v = await abortable(
        Promise.resolve().then(() => this.objective({ ...trial.parameters }, { trial, clientId, signal: this.abort.signal })),
        this.abort.signal,
      );
      const r = resultFields(v);
      if ('fields' in r) fields = r.fields;
      else reason = r.reason;
    } catch (err) {
      if (this.abort.signal.aborted) {
        clearInterval(beat);
        await this.c.abandonTrial(studyId, id, clientId).catch(() => undefined);
        return;
      }
      // The objective's failure is the trial's, not the run's.
      reason = (err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${String(err)}`).slice(0, 2000);
    } finally {
      clearInterval(beat);
    }
    let studyState: string | null = null;
    let told: Trial | null = null;
    if (fields === null) await this.c.failTrial(studyId, id, reason ?? 'failed', clientId);
    else ({ study_state: studyState, trials: [told] } = await this.c.observe(studyId, [{ ...fields, trial_id: id }]));
    const value = fields?.value ?? null;
    if (fields === null) this.failed++;
    else {
      this.completed++;
      // loss is null for several objectives (no single best: the server's front) and for infeasible points;
      // the best counts feasible trials only, as the server says (feasible is false when a constraint fails).
      const loss = told?.feasible === false ? null : (told?.loss ?? null);
      if (loss !== null && (this.bestLoss === null || loss < this.bestLoss)) [this.bestValue, this.bestLoss] = [value, loss];
    }
    this.byClient[clientId] = (this.byClient[clientId] ?? 0) + 1;
    if (studyState === 'COMPLETED') this.stop('study_completed');
    this.opts.onProgress?.({
      done: this.completed + this.failed,
      budget: this.opts.budget,
      clientId,
      trialId: id,
      parameters: trial.parameters,
      value,
      values: told?.values ?? (fields?.values ? [...fields.values] : null),
      infeasible: fields?.infeasible === true,
      failureReason: reason,
      best: this.bestValue,
      elapsedMs: performance.now() - this.t0,
    });
  }
}

/** Settles with the promise, or rejects with the signal's reason as soon as it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

/** A progress printer: one line per result on stderr. */
export function printProgress(p: Progress): void {
  const v =
    p.value !== null
      ? p.value.toPrecision(6)
      : p.values !== null
        ? `(${p.values.map((x) => x.toPrecision(6)).join(', ')})`
        : p.infeasible
          ? 'infeasible'
          : `FAILED (${p.failureReason})`;
  const b = p.best === null ? '–' : p.best.toPrecision(6);
  process.stderr.write(`[${p.done}/${p.budget}] ${p.clientId} trial ${p.trialId}: ${v}  best ${b}  (${(p.elapsedMs / 1000).toFixed(1)}s)\n`);
}

/** A page of a listing: its next_page_token, null or absent on the last. */
type Paged = { next_page_token?: string | null };

/** Every page of a listing: fetch(undefined), then fetch(next_page_token) until it is null. */
async function* pages<P extends Paged>(fetch: (token: string | undefined) => Promise<P>): AsyncGenerator<P> {
  let token: string | undefined;
  do {
    const page = await fetch(token);
    yield page;
    token = page.next_page_token ?? undefined;
  } while (token);
}

/** The first page with the lists `keys` of every page appended (next_page_token null). */
async function merged<P extends Paged>(fetch: (token: string | undefined) => Promise<P>, ...keys: (keyof P)[]): Promise<P> {
  let first: P | null = null;
  for await (const page of pages(fetch)) {
    if (!first) first = page;
    else for (const k of keys) (first[k] as unknown[]).push(...(page[k] as unknown[]));
  }
  return { ...first!, next_page_token: null };
}
