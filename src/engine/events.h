// What the engine hands its embedder besides plaintext, in wire order. The
// list is the one definition of the codes: the binding exports it to JS as
// `binding.events`, so no side keeps a copy by hand.
#ifndef TLSWRAP_ENGINE_EVENTS_H_
#define TLSWRAP_ENGINE_EVENTS_H_

namespace tlswrap {

// X(name, js name, code)
#define TLSWRAP_ENGINE_EVENTS(X)                                                                 \
  X(kHandshakeStart, "handshakeStart", 1)                                                        \
  X(kHandshakeDone, "handshakeDone", 2)                                                          \
  X(kSession, "session", 3)                    /* client: payload is the session's DER */        \
  X(kKeylog, "keylog", 4)                      /* payload is one NSS key log line */             \
  X(kCertCb, "certCb", 5)                      /* SNI name; `value` 1: OCSP requested */         \
  X(kEnd, "end", 6)                            /* close_notify, or EOF without it */             \
  X(kError, "error", 7)                        /* packed code; payload: printed line */          \
  X(kShutdown, "shutdown", 8)                  /* close_notify handed over: end */               \
  X(kNewSession, "newSession", 9)              /* id length (1 byte), id, DER */                 \
  X(kResumeSession, "resumeSession", 10)       /* the session id the client offers */            \
  X(kTransportError, "transportError", 11)     /* `error` errno, payload syscall */              \
  X(kWriteDone, "writeDone", 12)               /* `error` is the write's id */                   \
  X(kWriteGone, "writeGone", 13)               /* a queued write's memory was detached */        \
  X(kOCSPResponse, "ocspResponse", 14)         /* client: the staple; `value` 0: none */         \
  X(kReadGone, "readGone", 15)                 /* binding: memory decrypted into was detached */ \
  X(kInputBeforeStart, "inputBeforeStart", 16) /* binding: a client read before Start(); once */

enum class EventType : int {
#define TLSWRAP_EVENT_ENUM(name, js, code) name = code,
  TLSWRAP_ENGINE_EVENTS(TLSWRAP_EVENT_ENUM)
#undef TLSWRAP_EVENT_ENUM
};

}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_EVENTS_H_
