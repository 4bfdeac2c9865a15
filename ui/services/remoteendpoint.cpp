#include "remoteendpoint.h"

#include <QFile>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

bool isLocalNetworkHost(const QString &host)
{
    QString h = host;
    if (h.startsWith(QLatin1Char('[')) && h.endsWith(QLatin1Char(']')))
        h = h.mid(1, h.size() - 2);
    if (h.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    QHostAddress address;
    if (!address.setAddress(h))
        return false;
    if (address.isLoopback())
        return true;
    static const char *const kPrivate[] = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
                                           "fc00::/7", "fe80::/10"};
    for (const char *subnet : kPrivate) {
        if (address.isInSubnet(QHostAddress::parseSubnet(QLatin1String(subnet))))
            return true;
    }
    // An IPv4 address written as IPv6 (::ffff:a.b.c.d).
    bool ok = false;
    const quint32 v4 = address.toIPv4Address(&ok);
    return ok && address.protocol() == QAbstractSocket::IPv6Protocol && isLocalNetworkHost(QHostAddress(v4).toString());
}

EndpointAddress RemoteEndpointRules::check(const QString &text)
{
    EndpointAddress out;
    const QUrl url = QUrl::fromUserInput(text.trimmed());
    const QString typed = text.trimmed();
    if (typed.isEmpty() || !url.isValid() || url.host().isEmpty()) {
        out.error = tr("Enter the endpoint's address, e.g. https://example.org/v1 or http://192.168.1.20:5001/v1.");
        return out;
    }
    const QString scheme = url.scheme().toLower();
    const bool explicitScheme = typed.contains(QLatin1String("://"));
    if (!explicitScheme) {
        out.error = tr("Start the address with https:// (or http:// for a loopback or private address).");
        return out;
    }
    if (scheme != QLatin1String("https") && scheme != QLatin1String("http")) {
        out.error = tr("Only https:// and http:// addresses are supported.");
        return out;
    }
    if (scheme == QLatin1String("http") && !isLocalNetworkHost(url.host())) {
        out.error = tr("Plain HTTP is allowed only for loopback and private network addresses; use https:// for %1.")
                        .arg(url.host());
        return out;
    }
    QUrl base = url.adjusted(QUrl::RemoveQuery | QUrl::RemoveFragment);
    base.setUserInfo({});
    QString path = base.path();
    while (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    if (!path.endsWith(QLatin1String("/v1")))
        path += QStringLiteral("/v1");
    base.setPath(path);
    out.baseUrl = base;
    out.note = noteFor(base);
    return out;
}

QString RemoteEndpointRules::noteFor(const QUrl &baseUrl)
{
    if (baseUrl.scheme() == QLatin1String("http"))
        return tr("Plain HTTP: messages and the API key travel unencrypted on the local network.");
    return {};
}

RemoteEndpointStore::RemoteEndpointStore(QString filePath)
    : m_path(std::move(filePath))
{
}

QList<RemoteEndpoint> RemoteEndpointStore::load() const
{
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<RemoteEndpoint> out;
    const QJsonArray list = QJsonDocument::fromJson(file.readAll()).object().value(QLatin1String("endpoints")).toArray();
    for (const QJsonValue &v : list) {
        const QJsonObject o = v.toObject();
        const EndpointAddress address = RemoteEndpointRules::check(o.value(QLatin1String("url")).toString());
        const QString name = o.value(QLatin1String("name")).toString();
        if (address.baseUrl.isEmpty() || name.isEmpty())
            continue;  // edited by hand into something the app no longer accepts
        out.append({name, address.baseUrl, o.value(QLatin1String("apiKey")).toString()});
    }
    return out;
}

bool RemoteEndpointStore::save(const QList<RemoteEndpoint> &endpoints)
{
    QJsonArray list;
    for (const RemoteEndpoint &e : endpoints) {
        QJsonObject o{{QStringLiteral("name"), e.name}, {QStringLiteral("url"), e.baseUrl.toString()}};
        if (!e.apiKey.isEmpty())
            o.insert(QStringLiteral("apiKey"), e.apiKey);
        list.append(o);
    }
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly)) {
        m_error = file.errorString();
        return false;
    }
    // Owner-only before any key is written; the rename keeps the permissions.
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(QJsonDocument(QJsonObject{{QStringLiteral("endpoints"), list}}).toJson());
    if (!file.commit()) {
        m_error = file.errorString();
        return false;
    }
    QFile::setPermissions(m_path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    m_error.clear();
    return true;
}

QString RemoteEndpointStore::keyWarning() const
{
    return tr("No secret storage is available: the API key is kept unencrypted in %1, readable only by you.")
        .arg(m_path);
}
