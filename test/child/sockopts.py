# Child of socket.test.js: reads TCP_NODELAY, SO_KEEPALIVE and TCP_KEEPIDLE
# of file descriptor FD of process PID (Linux >= 5.6: pidfd_getfd copies the
# fd into this process; the socket is shared, its options are the same).
# Prints one JSON line; exits 3 where the kernel does not allow it.
import ctypes, json, os, socket, sys

pid, fd = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_getfd = 438
try:
    pidfd = os.pidfd_open(pid)
except (AttributeError, OSError) as e:
    print(json.dumps({"unsupported": str(e)}))
    sys.exit(3)
copy = libc.syscall(SYS_pidfd_getfd, pidfd, fd, 0)
if copy < 0:
    print(json.dumps({"unsupported": os.strerror(ctypes.get_errno())}))
    sys.exit(3)
s = socket.socket(fileno=copy)
try:
    print(json.dumps({
        "nodelay": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
        "keepalive": s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
        "keepidle": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
    }))
finally:
    s.detach()
    os.close(copy)
    os.close(pidfd)
