// A remote OpenAI-compatible endpoint (another EXL Studio, TabbyAPI, vLLM, a llama.cpp server):
// its address rules (HTTPS, or plain HTTP only to loopback and private addresses) and where the
// list of endpoints and their API keys are kept.
#pragma once
#include <QCoreApplication>
#include <QList>
#include <QString>
#include <QUrl>

struct RemoteEndpoint {
    QString name;
    QUrl baseUrl;    // normalised: http(s)://host[:port]/.../v1
    QString apiKey;  // empty: no Authorization header

    friend bool operator==(const RemoteEndpoint &, const RemoteEndpoint &) = default;
};

// The outcome of checking an address the user typed.
struct EndpointAddress {
    QUrl baseUrl;       // normalised (ends with /v1); empty when refused
    QString error;      // why it is refused
    QString note;       // shown beside the endpoint (plain HTTP on a local network)
};

// True for loopback (127/8, ::1, "localhost") and private addresses (10/8, 172.16/12,
// 192.168/16, 169.254/16, fc00::/7, fe80::/10). Host names other than "localhost" are not
// resolved and count as public.
bool isLocalNetworkHost(const QString &host);

class RemoteEndpointRules
{
    Q_DECLARE_TR_FUNCTIONS(RemoteEndpointRules)
public:
    // Accepts https:// anywhere and http:// to loopback or private addresses; adds "/v1"
    // when the path does not end with it.
    static EndpointAddress check(const QString &text);
    // The note shown for an accepted address (plain HTTP), empty for HTTPS.
    static QString noteFor(const QUrl &baseUrl);
};

// Keeps the endpoints in <dir>/remote-endpoints.json. No platform secret storage is built in
// (QtKeychain is not available here), so API keys are kept in that file, which is written with
// owner-only permissions (0600); keyWarning() says so where a key is entered.
class RemoteEndpointStore
{
    Q_DECLARE_TR_FUNCTIONS(RemoteEndpointStore)
public:
    explicit RemoteEndpointStore(QString filePath);

    QList<RemoteEndpoint> load() const;
    // Writes atomically; false (with lastError()) when the file cannot be written.
    bool save(const QList<RemoteEndpoint> &endpoints);
    QString lastError() const { return m_error; }
    QString filePath() const { return m_path; }
    static bool secretStorageAvailable() { return false; }
    QString keyWarning() const;

private:
    QString m_path;
    QString m_error;
};
