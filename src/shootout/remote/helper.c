/* shootout's helper on a remote machine (or VM guest), compiled there with its own cc.
 *
 *   helper run TIMEOUT_S TOKEN CWD -- ARGV...
 *       Runs ARGV in CWD in its own process group, stdin/stdout/stderr passed through, and
 *       waits for it with wait4(), so the resource usage is the remote process's own. When
 *       TIMEOUT_S passes, the helper gets SIGTERM (a background command being stopped), or
 *       the ssh channel goes away (stdout reports an error or hang-up: sshd does not signal
 *       a command without a pty), the whole group is killed. Last, it
 *       prints one line to stderr:
 *         TOKEN status=S wall=W user=U sys=Y maxrss=K nvcsw=V nivcsw=I started=T timedout=0|1
 *       S is the exit status, or minus the signal that killed the command.
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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE (1 << 20)

static int wake[2];
static volatile sig_atomic_t stop_asked;

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_signal(int sig) {
    if (sig == SIGTERM) stop_asked = 1;
    int saved = errno;
    if (write(wake[1], "c", 1) < 0) { /* the pipe is non-blocking and already signalled */ }
    errno = saved;
}

static int run(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: helper run TIMEOUT_S TOKEN CWD -- ARGV...\n");
        return 2;
    }
    double timeout = atof(argv[2]);
    const char *token = argv[3], *cwd = argv[4];
    char **command = argv + 6;
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) { perror("pipe2"); return 2; }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL); /* stop a background command: kill its group, still report */
    signal(SIGPIPE, SIG_IGN); /* a closed channel is noticed by poll, not by dying mid-write */

    double started = clock_s(CLOCK_REALTIME), t0 = clock_s(CLOCK_MONOTONIC);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (chdir(cwd) != 0) { fprintf(stderr, "cannot enter %s: %s\n", cwd, strerror(errno)); _exit(127); }
        execvp(command[0], command);
        fprintf(stderr, "cannot run %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with the kill below */
    int timed_out = 0, status = 0;
    struct rusage ru;
    for (;;) {
        pid_t done = wait4(pid, &status, WNOHANG, &ru);
        if (done == pid) break;
        double left = timeout - (clock_s(CLOCK_MONOTONIC) - t0);
        timed_out = left <= 0;
        struct pollfd fds[2] = {{wake[0], POLLIN, 0}, {STDOUT_FILENO, 0, 0}};
        int n = timed_out ? 0 : poll(fds, 2, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
        if (timed_out || stop_asked || (n > 0 && (fds[1].revents & (POLLERR | POLLHUP)))) {
            killpg(pid, SIGKILL);
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
            break;
        }
        if (n > 0 && (fds[0].revents & POLLIN)) { char buf[64]; while (read(wake[0], buf, sizeof buf) > 0) {} }
    }
    double wall = clock_s(CLOCK_MONOTONIC) - t0;
    killpg(pid, SIGKILL); /* stragglers the command left behind must not disturb the next trial */
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    fprintf(stderr, "\n%s status=%d wall=%.9f user=%.6f sys=%.6f maxrss=%ld nvcsw=%ld nivcsw=%ld started=%.6f timedout=%d\n",
            token, code, wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6, ru.ru_maxrss, ru.ru_nvcsw, ru.ru_nivcsw,
            started, timed_out);
    return 0;
}

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
    fprintf(stderr, "usage: helper run|snap|watch ...\n");
    return 2;
}
