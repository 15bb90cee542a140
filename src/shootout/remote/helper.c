/* shootout's helper on a remote machine (or VM guest), compiled there with its own cc.
 *
 *   helper serve
 *       Commands one after another on one ssh channel, so that a trial costs no new
 *       channel and no login shell of the remote account. Each request on stdin is a list
 *       of netstrings (LEN ":" BYTES): "run", TIMEOUT_S, CWD, N, N times NAME=VALUE (the
 *       whole environment), M, M times an argument, then the command's stdin. The answer
 *       on stdout: frames "o LEN\n" BYTES (its stdout) and "e LEN\n" BYTES (its stderr),
 *       then one line "x " USAGE (below). When stdin closes (the channel went away) while
 *       a command runs, its process group is killed and the helper exits.
 *   helper run TIMEOUT_S TOKEN CWD -- ARGV...
 *       One command (a background server) with stdin/stdout/stderr passed through; when
 *       the ssh channel goes away (stdout reports an error or hang-up: sshd does not signal
 *       a command without a pty) or TIMEOUT_S passes, the group is killed. SIGTERM passes
 *       SIGTERM on to the group, SIGUSR1 kills it. Last, to stderr: "\n" TOKEN " " USAGE.
 *   USAGE: status=S wall=W user=U sys=Y maxrss=K nvcsw=V nivcsw=I minflt=F majflt=J delay=D started=T timedout=0|1
 *          instructions=N cycles=C pmu=all|user|none
 *       from wait4() of the command's own process, so the resource usage is the remote
 *       program's (forked from this small helper, its max RSS is its own, not a big parent's);
 *       D: seconds it waited for a CPU (/proc/PID/schedstat, read before it is reaped; -1: unknown);
 *       program's; S is the exit status, or minus the signal that killed the command.
 *       N, C: the CPU's counts (its PMU) of the command and every process it started, from its
 *       exec to its exit (-1: not counted: no PMU, an event the PMU lacks, or perf_event_paranoid);
 *       pmu=user where the kernel refused to count its own code for the command.
 *   helper snap PATTERN...
 *       For every file matching a glob pattern: "F LENGTH PATH\n" then LENGTH bytes (up to
 *       1 MiB). Reads procfs/sysfs in-process: one exec for a whole snapshot.
 *   helper watch INTERVAL_S PATTERN...
 *       A snapshot, then "E UNIX_TIME\n", every INTERVAL_S until stdout is closed (SIGPIPE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE (1 << 20)
#define DRAIN_S 5.0 /* output of stragglers that escaped the group is read this long at most */

extern char **environ;
static int wake[2];
static volatile sig_atomic_t term_asked, kill_asked;

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_signal(int sig) {
    if (sig == SIGTERM || sig == SIGHUP) term_asked = 1;
    if (sig == SIGUSR1) kill_asked = 1;
    int saved = errno;
    if (write(wake[1], "c", 1) < 0) { /* the pipe is non-blocking and already signalled */ }
    errno = saved;
}

static void setup_signals(void) {
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) { perror("pipe2"); exit(2); }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed channel is noticed by poll, not by dying mid-write */
}

static void drain_wake(void) {
    char buf[64];
    while (read(wake[0], buf, sizeof buf) > 0) {}
}

/* The PMU's counts of one command: instructions and cycles, opened on the child before it execs
 * (enable_on_exec: the helper's fork and the child's set-up are not counted) and inherited by
 * every process it starts, whose counts are added to it when they exit. */
#define N_EVENTS 2
static const unsigned long long EVENTS[N_EVENTS] = {PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES};
struct counts { int fd[N_EVENTS]; int user_only; };

static int open_event(pid_t pid, unsigned long long config, int user_only) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = 1;
    attr.enable_on_exec = 1;
    attr.inherit = 1;
    attr.exclude_hv = 1;
    attr.exclude_kernel = (unsigned)user_only;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void open_counts(struct counts *c, pid_t pid) {
    c->user_only = 0;
    for (int i = 0; i < N_EVENTS; i++) {
        c->fd[i] = open_event(pid, EVENTS[i], c->user_only);
        if (c->fd[i] < 0 && (errno == EACCES || errno == EPERM) && !c->user_only) {
            c->user_only = 1; /* perf_event_paranoid 2 allows user space alone */
            for (int j = 0; j < i; j++) { close(c->fd[j]); c->fd[j] = open_event(pid, EVENTS[j], 1); }
            c->fd[i] = open_event(pid, EVENTS[i], 1);
        }
    }
}

/* A count, scaled where the PMU was shared with other events for part of the time; -1: none. */
static long long read_count(int fd) {
    unsigned long long v[3];
    if (fd < 0 || read(fd, v, sizeof v) != (ssize_t)sizeof v || v[2] == 0) return -1;
    return v[2] == v[1] ? (long long)v[0] : (long long)((double)v[0] * (double)v[1] / (double)v[2]);
}

static void close_counts(struct counts *c, long long out[N_EVENTS]) {
    for (int i = 0; i < N_EVENTS; i++) {
        out[i] = read_count(c->fd[i]);
        if (c->fd[i] >= 0) close(c->fd[i]);
        c->fd[i] = -1;
    }
}

/* fork the command into its own process group; fds[0..2] become its stdin/stdout/stderr (-1: inherit).
 * The child waits at a gate until its counters are open, so that its exec starts them. */
static pid_t start(char **argv, char **envp, const char *cwd, const int fds[3], struct counts *counts) {
    int gate[2];
    if (pipe2(gate, O_CLOEXEC) != 0) { perror("pipe2"); return -1; }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); close(gate[0]); close(gate[1]); return -1; }
    if (pid == 0) {
        setpgid(0, 0);
        close(gate[1]);
        char none;
        while (read(gate[0], &none, 1) < 0 && errno == EINTR) {} /* end of file: the counters are open */
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0 && dup2(fds[i], i) < 0) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        if (chdir(cwd) != 0) { fprintf(stderr, "cannot enter %s: %s\n", cwd, strerror(errno)); _exit(127); }
        if (envp) environ = envp; /* execvp searches the command's own PATH */
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with a kill of the group */
    close(gate[0]);
    open_counts(counts, pid);
    close(gate[1]);
    return pid;
}

static void usage_line(FILE *out, int status, const struct rusage *ru, double wall, double delay, double started,
                       int timed_out, struct counts *counts) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    long long counted[N_EVENTS];
    close_counts(counts, counted);
    const char *scope = counted[0] < 0 && counted[1] < 0 ? "none" : counts->user_only ? "user" : "all";
    fprintf(out, "status=%d wall=%.9f user=%.6f sys=%.6f maxrss=%ld nvcsw=%ld nivcsw=%ld minflt=%ld majflt=%ld "
            "delay=%.9f started=%.6f timedout=%d instructions=%lld cycles=%lld pmu=%s\n",
            code, wall, ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6,
            ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6, ru->ru_maxrss, ru->ru_nvcsw, ru->ru_nivcsw,
            ru->ru_minflt, ru->ru_majflt, delay, started, timed_out, counted[0], counted[1], scope);
}

static double run_delay(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long long ran, waited;
    int n = fscanf(f, "%llu %llu", &ran, &waited);
    fclose(f);
    return n == 2 ? (double)waited * 1e-9 : -1;
}

/* 1 once the command has exited: its wait for a CPU read while it is a zombie, then reaped. */
static int reaped_now(pid_t pid, int *status, struct rusage *ru, double *delay) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid) return 0;
    *delay = run_delay(pid);
    while (wait4(pid, status, 0, ru) < 0 && errno == EINTR) {}
    return 1;
}

static void kill_and_reap(pid_t pid, int *status, struct rusage *ru) {
    killpg(pid, SIGKILL);
    while (wait4(pid, status, 0, ru) < 0 && errno == EINTR) {}
}

/* -- run: one command, stdio passed through ---------------------------------------------- */

static int run(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: helper run TIMEOUT_S TOKEN CWD -- ARGV...\n");
        return 2;
    }
    double timeout = atof(argv[2]);
    const char *token = argv[3];
    setup_signals();
    double started = clock_s(CLOCK_REALTIME), t0 = clock_s(CLOCK_MONOTONIC);
    const int inherit[3] = {-1, -1, -1};
    struct counts counts;
    pid_t pid = start(argv + 6, NULL, argv[4], inherit, &counts);
    if (pid < 0) return 2;
    int timed_out = 0, status = 0, termed = 0;
    double delay = -1;
    struct rusage ru;
    for (;;) {
        if (reaped_now(pid, &status, &ru, &delay)) break;
        double left = timeout - (clock_s(CLOCK_MONOTONIC) - t0);
        timed_out = left <= 0;
        if (term_asked && !termed) { killpg(pid, SIGTERM); termed = 1; } /* stop(): the group may end itself */
        struct pollfd fds[2] = {{wake[0], POLLIN, 0}, {STDOUT_FILENO, 0, 0}};
        int n = timed_out || kill_asked ? 0 : poll(fds, 2, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
        if (timed_out || kill_asked || (n > 0 && (fds[1].revents & (POLLERR | POLLHUP)))) {
            kill_and_reap(pid, &status, &ru);
            break;
        }
        if (n > 0 && (fds[0].revents & POLLIN)) drain_wake();
    }
    double wall = clock_s(CLOCK_MONOTONIC) - t0;
    killpg(pid, SIGKILL); /* stragglers the command left behind must not disturb the next one */
    fprintf(stderr, "\n%s ", token);
    usage_line(stderr, status, &ru, wall, delay, started, timed_out, &counts);
    return 0;
}

/* -- serve: many commands over one channel ------------------------------------------------ */

/* One netstring's length ("LEN:"), -1 at the end of input or on a malformed header. */
static long ns_length(FILE *in) {
    long len = 0;
    int c, digits = 0;
    while ((c = getc(in)) != ':') {
        if (c < '0' || c > '9' || ++digits > 12) return -1;
        len = len * 10 + (c - '0');
    }
    return digits ? len : -1;
}

static char *ns_string(FILE *in) {
    long len = ns_length(in);
    if (len < 0) return NULL;
    char *s = malloc((size_t)len + 1);
    if (!s || fread(s, 1, (size_t)len, in) != (size_t)len) { free(s); return NULL; }
    s[len] = 0;
    return s;
}

static char **ns_list(FILE *in) {
    char *count = ns_string(in);
    if (!count) return NULL;
    long n = atol(count);
    free(count);
    if (n < 0 || n > 100000) return NULL;
    char **list = calloc((size_t)n + 1, sizeof *list);
    for (long i = 0; list && i < n; i++)
        if (!(list[i] = ns_string(in))) return NULL; /* the helper exits: nothing to free */
    return list;
}

/* The command's stdin: copied from the request into an anonymous file, read from its start. */
static int ns_stdin(FILE *in) {
    long len = ns_length(in);
    if (len < 0) return -1;
    int fd = (int)syscall(SYS_memfd_create, "shootout-stdin", 1U /* MFD_CLOEXEC */);
    if (fd < 0) {
        FILE *tmp = tmpfile();
        if (!tmp) return -1;
        fd = fcntl(fileno(tmp), F_DUPFD_CLOEXEC, 0);
        fclose(tmp);
        if (fd < 0) return -1;
    }
    static char buf[65536];
    while (len > 0) {
        size_t want = len < (long)sizeof buf ? (size_t)len : sizeof buf;
        size_t got = fread(buf, 1, want, in);
        if (got == 0 || write(fd, buf, got) != (ssize_t)got) { close(fd); return -1; }
        len -= (long)got;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static void frame(char kind, const char *data, size_t len) {
    printf("%c %zu\n", kind, len);
    fwrite(data, 1, len, stdout);
}

/* Forward what is readable on *fd as frames of `kind`; closes it at its end. */
static void forward(int *fd, char kind) {
    static char buf[65536];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) frame(kind, buf, (size_t)n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN)) { close(*fd); *fd = -1; }
}

static void free_list(char **list) {
    for (char **p = list; p && *p; p++) free(*p);
    free(list);
}

static int serve_one(FILE *in) {
    char *verb = ns_string(in);
    if (!verb) return 0; /* end of input: the client is done */
    if (strcmp(verb, "run") != 0) { fprintf(stderr, "helper serve: unknown request %s\n", verb); return -1; }
    char *timeout_s = ns_string(in), *cwd = ns_string(in);
    char **envp = timeout_s && cwd ? ns_list(in) : NULL;
    char **argv = envp ? ns_list(in) : NULL;
    int input = argv ? ns_stdin(in) : -1;
    if (input < 0 || !argv[0]) { fprintf(stderr, "helper serve: malformed request\n"); return -1; }
    double timeout = atof(timeout_s);
    free(verb);
    free(timeout_s);
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) { perror("pipe2"); return -1; }
    double started = clock_s(CLOCK_REALTIME), t0 = clock_s(CLOCK_MONOTONIC);
    const int fds[3] = {input, out[1], err[1]};
    struct counts counts;
    pid_t pid = start(argv, envp, cwd, fds, &counts);
    free(cwd);
    free_list(envp);
    free_list(argv);
    close(input);
    close(out[1]);
    close(err[1]);
    if (pid < 0) return -1;
    int timed_out = 0, status = 0, reaped = 0, lost = 0;
    double wall = 0, drain_until = 0, delay = -1;
    struct rusage ru;
    for (;;) {
        if (!reaped && reaped_now(pid, &status, &ru, &delay)) {
            reaped = 1;
            wall = clock_s(CLOCK_MONOTONIC) - t0;
            killpg(pid, SIGKILL); /* stragglers must not disturb the next command */
            drain_until = clock_s(CLOCK_MONOTONIC) + DRAIN_S;
        }
        double now = clock_s(CLOCK_MONOTONIC);
        if (reaped && ((out[0] < 0 && err[0] < 0) || now > drain_until)) break;
        double left = reaped ? drain_until - now : timeout - (now - t0);
        if (!reaped && (left <= 0 || term_asked)) {
            timed_out = !term_asked;
            lost = term_asked;
            kill_and_reap(pid, &status, &ru);
            reaped = 1;
            wall = clock_s(CLOCK_MONOTONIC) - t0;
            drain_until = clock_s(CLOCK_MONOTONIC) + DRAIN_S;
            continue;
        }
        struct pollfd fds[4] = {{wake[0], POLLIN, 0}, {out[0], POLLIN, 0}, {err[0], POLLIN, 0},
                                {reaped ? -1 : STDIN_FILENO, POLLIN, 0}};
        int n = poll(fds, 4, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
        if (n <= 0) continue;
        if (fds[0].revents) drain_wake();
        if (fds[1].revents) forward(&out[0], 'o');
        if (fds[2].revents) forward(&err[0], 'e');
        if (fds[3].revents) { /* the client never writes while a command runs: the channel closed */
            kill_and_reap(pid, &status, &ru);
            return -1;
        }
    }
    if (out[0] >= 0) close(out[0]);
    if (err[0] >= 0) close(err[0]);
    if (lost) return -1;
    fputs("x ", stdout);
    usage_line(stdout, status, &ru, wall, delay, started, timed_out, &counts);
    fflush(stdout);
    return 1;
}

static int serve(void) {
    setup_signals();
    int done;
    while ((done = serve_one(stdin)) > 0) {}
    return done < 0 ? 1 : 0;
}

/* -- snap and watch ----------------------------------------------------------------------- */

static void snap(int count, char **patterns) {
    static char buf[MAX_FILE];
    for (int i = 0; i < count; i++) {
        glob_t found;
        if (glob(patterns[i], 0, NULL, &found) != 0) continue;
        for (size_t j = 0; j < found.gl_pathc; j++) {
            int fd = open(found.gl_pathv[j], O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            ssize_t got = 0, n;
            while (got < MAX_FILE && (n = read(fd, buf + got, MAX_FILE - got)) > 0) got += n;
            close(fd);
            if (n < 0 && got == 0) continue; /* sysfs files may refuse reads */
            printf("F %zd %s\n", got, found.gl_pathv[j]);
            fwrite(buf, 1, (size_t)got, stdout);
        }
        globfree(&found);
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "serve") == 0) return serve();
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return run(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "snap") == 0) {
        snap(argc - 2, argv + 2);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc >= 3 && strcmp(argv[1], "watch") == 0) {
        double interval = atof(argv[2]);
        struct timespec pause = {(time_t)interval, (long)((interval - (time_t)interval) * 1e9)};
        for (;;) {
            snap(argc - 3, argv + 3);
            printf("E %.6f\n", clock_s(CLOCK_REALTIME));
            if (fflush(stdout) != 0) return 0;
            nanosleep(&pause, NULL);
        }
    }
    fprintf(stderr, "usage: helper serve|run|snap|watch ...\n");
    return 2;
}
