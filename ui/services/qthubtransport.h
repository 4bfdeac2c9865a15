// The Hub client's transport in the app: Qt Network (the system's proxy settings and TLS setup, as
// every other request of the app). The protocol, the cache layout and resuming stay in the engine's
// exl::hub::HubClient; this only moves bytes.
//
// send() blocks the calling thread: it runs a QNetworkAccessManager of its own under a local event
// loop, so it is called from worker threads only (the client's download threads, a pool thread),
// never from the GUI thread. Redirects are handed back to the client, which follows them.
#pragma once
#include <atomic>

#include "exl/hub.h"

class QtHubTransport : public exl::hub::Transport
{
public:
    // `transferTimeoutMs`: a request with no data moving for this long fails (a network error).
    explicit QtHubTransport(int transferTimeoutMs = 60000) : m_timeoutMs(transferTimeoutMs) {}
    exl::hub::HttpResponse send(const exl::hub::HttpRequest &request, const exl::hub::BodySink &sink) override;
    // Stops every request under way now (they throw HubError(cancelled) within a tenth of a second),
    // also one that waits for a stalled server: a download's Cancel takes effect at once. Any thread.
    void abortAll() { m_aborts.fetch_add(1); }

private:
    int m_timeoutMs;
    std::atomic<unsigned> m_aborts{0};
};
