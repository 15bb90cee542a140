/*
 * udpsink - the "socket" rung of the drop ladder: a UDP socket that reads every
 * datagram sent to PORT and throws it away, 64 at a time with recvmmsg(2), until
 * SIGINT or SIGTERM. Prints "ready" once bound and, at the end, "received N" and
 * "cpu_ns T", its own CPU time (getrusage) over its life: the reader's share of the
 * rung's cost per datagram. The rate is counted at the kernel's Udp InDatagrams.
 */
#define _GNU_SOURCE
#define KERNEL_NAME "udpsink"
#define KERNEL_USAGE "PORT"
#include "kernel.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define BATCH 64
#define FRAME 2048

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    static char buffers[BATCH][FRAME];
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: a signal ends recvmmsg */
    unsigned long long received = 0;
    uint64_t port;
    int fd;

    if (argc != 2 || parse_u64(argv[1], 1, 65535, &port) != 0)
        usage();
    addr.sin_port = htons((uint16_t)port);
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        perror(KERNEL_NAME ": cannot bind the UDP port");
        return 1;
    }
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    memset(msgs, 0, sizeof(msgs));
    for (int i = 0; i < BATCH; i++) {
        iov[i] = (struct iovec){.iov_base = buffers[i], .iov_len = FRAME};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        int got = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

        if (got > 0)
            received += (unsigned long long)got;
        else if (got < 0 && errno != EINTR) {
            perror(KERNEL_NAME ": recvmmsg failed");
            return 1;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("received %llu\ncpu_ns %llu\n", received,
           (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
               (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL);
    return flush_results();
}
