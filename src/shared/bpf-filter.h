/*
 * bpf-filter.h — the pieces the seccomp allowlists of ringfence's own
 * helper processes are made of (the daemon's request parser, the egress
 * process, the run CA's keeper), written once so they cannot drift apart.
 *
 * Each macro is a run of complete classic-BPF statements whose jumps stay
 * inside it; between them the accumulator holds the syscall's number. An
 * allowlist is RF_BPF_LOAD_NR, then its RF_BPF_ALLOW lines (and the other
 * pieces), then its default return. The run's own filter is another
 * matter: sandbox/seccomp.c builds it with libseccomp.
 */
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>

/* The architecture checked (anything but x86-64 killed), then the
 * syscall's number loaded. */
#define RF_BPF_LOAD_NR                                                                             \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),                   \
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),                      \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),                               \
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/* x32 calls (the number with bit 30 set) killed. */
#define RF_BPF_NO_X32                                                                              \
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),                                     \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* mmap and mprotect allowed, never with PROT_EXEC (EPERM). */
#define RF_BPF_MAP_NO_EXEC                                                                         \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),                                      \
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4),                          \
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),        \
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),                             \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),                              \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* The syscall nr allowed. */
#define RF_BPF_ALLOW(nr)                                                                           \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* What every helper may do to itself, and what the C library and the
 * sanitizers' runtimes reach for: its own signal stack, yielding,
 * sleeping, reading its limits, exiting. */
#define RF_BPF_ALLOW_RUNTIME                                                                       \
        RF_BPF_ALLOW(__NR_sigaltstack), RF_BPF_ALLOW(__NR_sched_yield),                            \
                RF_BPF_ALLOW(__NR_getrlimit), RF_BPF_ALLOW(__NR_nanosleep),                        \
                RF_BPF_ALLOW(__NR_clock_nanosleep), RF_BPF_ALLOW(__NR_exit),                       \
                RF_BPF_ALLOW(__NR_exit_group)
