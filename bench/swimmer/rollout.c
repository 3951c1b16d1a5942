/*
 * Swimmer episodes with a linear policy, on MuJoCo (Debian's libmujoco-dev, MuJoCo 2.2.2 API).
 *
 *   rollout MODEL.xml [--steps N] [--verbose] < numbers
 *   rollout MODEL.xml --info
 *
 * stdin: 16 policy weights W (row-major 2×8: W[0..7] drive rotor 1, W[8..15] rotor 2), then zero or
 * more start states of 10 numbers each (offsets added to the model's qpos0 and zero qvel:
 * 5 positions, 5 velocities). With none, one episode from the exact initial state.
 * stdout: one line per start state with the episode return (with --verbose also the tip's x at the
 * start and the end, the summed control cost, the steps and the simulated time).
 *
 * Per step, following Gymnasium's Swimmer-v4/v5 documentation:
 *   obs    = (qpos[2..4], qvel[0..4])           the 3 angles and 5 velocities, tip x/y excluded
 *   action = clip(W·obs, -1, 1)                  the environment's action box
 *   FRAME_SKIP = 4 simulator steps of the model's 0.01 s, so dt = 0.04 s between actions
 *   reward = (x_after - x_before)/dt - 1e-4·|action|²    (forward_reward_weight 1, ctrl_cost_weight 1e-4)
 * An episode is 1000 such steps (the registered time limit); the swimmer never terminates early.
 * Exit status: 0, or 2 with a message on stderr for bad input or a model that fails to load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mujoco/mujoco.h>

#define FRAME_SKIP 4
#define HORIZON 1000
#define CTRL_COST_WEIGHT 1e-4
#define N_OBS 8
#define N_ACT 2
#define N_WEIGHTS (N_OBS * N_ACT)
#define MAX_STARTS 64

static int fail(const char *msg, const char *detail) {
  fprintf(stderr, "rollout: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
  return 2;
}

static double clip(double v) { return v < -1 ? -1 : v > 1 ? 1 : v; }

/* One episode from qpos0 + start[0..nq-1], qvel = start[nq..nq+nv-1]; returns the return. */
static double episode(const mjModel *m, mjData *d, const double *w, const double *start, int steps,
                      double *x_start, double *x_end, double *ctrl_cost) {
  mj_resetData(m, d);
  for (int i = 0; i < m->nq; i++) d->qpos[i] = m->qpos0[i] + start[i];
  for (int i = 0; i < m->nv; i++) d->qvel[i] = start[m->nq + i];
  mj_forward(m, d);
  const double dt = m->opt.timestep * FRAME_SKIP;
  double total = 0, cost = 0;
  *x_start = d->qpos[0];
  for (int t = 0; t < steps; t++) {
    double obs[N_OBS];
    for (int i = 0; i < 3; i++) obs[i] = d->qpos[2 + i];
    for (int i = 0; i < 5; i++) obs[3 + i] = d->qvel[i];
    double sq = 0;
    for (int a = 0; a < N_ACT; a++) {
      double s = 0;
      for (int i = 0; i < N_OBS; i++) s += w[a * N_OBS + i] * obs[i];
      d->ctrl[a] = clip(s);
      sq += d->ctrl[a] * d->ctrl[a];
    }
    const double x_before = d->qpos[0];
    for (int k = 0; k < FRAME_SKIP; k++) mj_step(m, d);
    total += (d->qpos[0] - x_before) / dt - CTRL_COST_WEIGHT * sq;
    cost += CTRL_COST_WEIGHT * sq;
  }
  *x_end = d->qpos[0];
  *ctrl_cost = cost;
  return total;
}

int main(int argc, char **argv) {
  if (argc < 2) return fail("usage: rollout MODEL.xml [--steps N] [--verbose] | --info", NULL);
  int steps = HORIZON, verbose = 0, info = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--info")) info = 1;
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      char *end;
      long n = strtol(argv[++i], &end, 10);
      if (*end || n < 1 || n > 1000000) return fail("--steps needs an integer in [1, 1000000]", argv[i]);
      steps = (int)n;
    } else return fail("unknown argument", argv[i]);
  }

  char error[1000] = "";
  mjModel *m = mj_loadXML(argv[1], NULL, error, sizeof error);
  if (!m) return fail("cannot load the model", error);
  if (m->nq != 5 || m->nv != 5 || m->nu != N_ACT) {
    mj_deleteModel(m);
    return fail("the model is not the 3-link swimmer (nq = nv = 5, nu = 2 expected)", NULL);
  }
  if (info) {
    printf("timestep %.17g\nframe_skip %d\ndt %.17g\nhorizon %d\nnq %d\nnv %d\nnu %d\nobs %d\nmujoco %d\n",
           m->opt.timestep, FRAME_SKIP, m->opt.timestep * FRAME_SKIP, HORIZON, m->nq, m->nv, m->nu, N_OBS,
           mj_version());
    mj_deleteModel(m);
    return 0;
  }

  const int state = m->nq + m->nv;
  double w[N_WEIGHTS], starts[MAX_STARTS * 10];
  for (int i = 0; i < N_WEIGHTS; i++) {
    if (scanf("%lf", &w[i]) != 1 || !isfinite(w[i])) {
      mj_deleteModel(m);
      return fail("expected 16 finite policy weights on stdin", NULL);
    }
  }
  int n = 0, got = 0;
  double v;
  while (scanf("%lf", &v) == 1) {
    if (!isfinite(v) || got >= MAX_STARTS * state) {
      mj_deleteModel(m);
      return fail(isfinite(v) ? "too many start states (at most 64)" : "start states must be finite", NULL);
    }
    starts[got++] = v;
  }
  if (!feof(stdin) || got % state != 0) {
    mj_deleteModel(m);
    return fail("start states need 10 numbers each (5 position offsets, 5 velocities)", NULL);
  }
  n = got / state;
  if (n == 0) {
    memset(starts, 0, sizeof(double) * state);
    n = 1;
  }

  mjData *d = mj_makeData(m);
  for (int e = 0; e < n; e++) {
    double x0, x1, cost;
    double r = episode(m, d, w, starts + e * state, steps, &x0, &x1, &cost);
    if (verbose) printf("%.17g x_start %.17g x_end %.17g ctrl_cost %.17g steps %d time %.17g\n", r, x0, x1, cost, steps, d->time);
    else printf("%.17g\n", r);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
