// The remote service's building blocks: the incremental SSE parser (any split of the bytes,
// CRLF, comments, multi-line data, errors, malformed data), the address rules (HTTPS, or
// plain HTTP only to loopback and private addresses) and the endpoint file's permissions.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "services/remoteendpoint.h"
#include "services/ssestream.h"

namespace {
const QByteArray kStream =
    ": keep-alive\r\n\r\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n"
    "event: message\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\", w\\u00f6rld \\ud83d\\ude00\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n"
    "data: [DONE]\n\n";

QString textOf(const QList<SseChunk> &chunks)
{
    QString text;
    for (const SseChunk &c : chunks) {
        if (c.kind == SseChunk::Text)
            text += c.text;
    }
    return text;
}
}  // namespace

class RemoteStreamTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parsesAnySplitOfTheStream()
    {
        const QString expected = QStringLiteral("Hello, w\u00f6rld \U0001F600");
        for (int piece : {1, 2, 3, 7, 64, int(kStream.size())}) {
            SseParser parser;
            QList<SseChunk> chunks;
            for (int at = 0; at < kStream.size(); at += piece)
                chunks += parser.feed(kStream.mid(at, piece));
            QCOMPARE(textOf(chunks), expected);
            QVERIFY(parser.done());
            QVERIFY(!parser.hasPartialEvent());
            const auto usage = std::find_if(chunks.begin(), chunks.end(),
                                            [](const SseChunk &c) { return c.kind == SseChunk::Usage; });
            QVERIFY(usage != chunks.end());
            QCOMPARE(usage->completionTokens, 3);
            QCOMPARE(usage->promptTokens, 7);
        }
    }

    void joinsMultiLineData()
    {
        SseParser parser;
        const QList<SseChunk> chunks = parser.feed("data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"x\"}}]}\n\n");
        QCOMPARE(textOf(chunks), QStringLiteral("x"));
        QVERIFY(!parser.done());
    }

    void reportsErrorEvents()
    {
        SseParser parser;
        const QList<SseChunk> chunks =
            parser.feed("data: {\"error\":{\"message\":\"generation failed: out of memory\",\"type\":\"server_error\"}}\n\n");
        QCOMPARE(chunks.size(), 1);
        QCOMPARE(chunks[0].kind, SseChunk::Error);
        QCOMPARE(chunks[0].message, QStringLiteral("generation failed: out of memory"));
    }

    void stopsAtMalformedData_data()
    {
        QTest::addColumn<QByteArray>("event");
        QTest::newRow("not json") << QByteArray("data: {\"choices\": [{\"delta\": {\"content\": \"oops\"\n\n");
        QTest::newRow("no choices") << QByteArray("data: {\"id\":\"x\"}\n\n");
        QTest::newRow("content not text") << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n\n");
        QTest::newRow("array") << QByteArray("data: [1,2]\n\n");
    }

    void stopsAtMalformedData()
    {
        QFETCH(QByteArray, event);
        SseParser parser;
        QList<SseChunk> chunks = parser.feed("data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n" + event);
        chunks += parser.feed("data: {\"choices\":[{\"delta\":{\"content\":\"after\"}}]}\n\n");
        QCOMPARE(chunks.size(), 2);
        QCOMPARE(chunks[0].text, QStringLiteral("ok"));
        QCOMPARE(chunks[1].kind, SseChunk::Malformed);
        QVERIFY(!chunks[1].message.isEmpty());
    }

    void incompleteEventIsHeld()
    {
        SseParser parser;
        QVERIFY(parser.feed("data: {\"choices\":[{\"delta\":{\"content\":\"par").isEmpty());
        QVERIFY(parser.hasPartialEvent());
        QVERIFY(!parser.done());
    }

    void errorBodies()
    {
        QCOMPARE(openAiErrorMessage(R"({"error":{"message":"bad key","type":"x"}})"), QStringLiteral("bad key"));
        QCOMPARE(openAiErrorMessage(R"({"error":"overloaded"})"), QStringLiteral("overloaded"));
        QCOMPARE(openAiErrorMessage(R"({"detail":"Not authenticated"})"), QStringLiteral("Not authenticated"));
        QVERIFY(openAiErrorMessage("<html>502</html>").isEmpty());
    }

    void addressRules_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("baseUrl");  // empty: refused
        QTest::addColumn<bool>("plainHttpNote");
        QTest::newRow("https anywhere") << "https://api.example.org/v1" << "https://api.example.org/v1" << false;
        QTest::newRow("adds /v1") << "https://example.org:8443/" << "https://example.org:8443/v1" << false;
        QTest::newRow("loopback") << "http://127.0.0.1:5001" << "http://127.0.0.1:5001/v1" << true;
        QTest::newRow("localhost") << "http://localhost:8080/v1" << "http://localhost:8080/v1" << true;
        QTest::newRow("ipv6 loopback") << "http://[::1]:5001/v1" << "http://[::1]:5001/v1" << true;
        QTest::newRow("private 10/8") << "http://10.1.2.3:5000/v1" << "http://10.1.2.3:5000/v1" << true;
        QTest::newRow("private 172.16/12") << "http://172.31.0.9/v1" << "http://172.31.0.9/v1" << true;
        QTest::newRow("private 192.168/16") << "http://192.168.1.20:5001/v1" << "http://192.168.1.20:5001/v1" << true;
        QTest::newRow("ula ipv6") << "http://[fd00::5]:80/v1" << "http://[fd00::5]:80/v1" << true;
        QTest::newRow("public http") << "http://8.8.8.8/v1" << "" << false;
        QTest::newRow("172.32 is public") << "http://172.32.0.1/v1" << "" << false;
        QTest::newRow("http host name") << "http://example.org/v1" << "" << false;
        QTest::newRow("no scheme") << "192.168.1.20:5001" << "" << false;
        QTest::newRow("ftp") << "ftp://192.168.1.20/v1" << "" << false;
        QTest::newRow("empty") << "" << "" << false;
    }

    void addressRules()
    {
        QFETCH(QString, typed);
        QFETCH(QString, baseUrl);
        QFETCH(bool, plainHttpNote);
        const EndpointAddress address = RemoteEndpointRules::check(typed);
        QCOMPARE(address.baseUrl.toString(), baseUrl);
        QCOMPARE(address.error.isEmpty(), !baseUrl.isEmpty());
        QCOMPARE(!address.note.isEmpty(), plainHttpNote);
    }

    void storeKeepsKeysOwnerOnly()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        RemoteEndpointStore store(dir.filePath(QStringLiteral("remote-endpoints.json")));
        const QList<RemoteEndpoint> endpoints{
            {QStringLiteral("lab"), QUrl(QStringLiteral("http://192.168.1.20:5001/v1")), QStringLiteral("s3cret")},
            {QStringLiteral("cloud"), QUrl(QStringLiteral("https://api.example.org/v1")), {}}};
        QVERIFY(store.save(endpoints));
        const QFileDevice::Permissions perms = QFile::permissions(store.filePath());
        QVERIFY(perms.testFlag(QFileDevice::ReadOwner) && perms.testFlag(QFileDevice::WriteOwner));
        const QFileDevice::Permissions others = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup
                                               | QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;
        QCOMPARE(int(perms & others), 0);
        const QList<RemoteEndpoint> loaded = store.load();
        QCOMPARE(loaded.size(), 2);
        QCOMPARE(loaded[0].name, QStringLiteral("lab"));
        QCOMPARE(loaded[0].baseUrl, endpoints[0].baseUrl);
        QCOMPARE(loaded[0].apiKey, QStringLiteral("s3cret"));
        QVERIFY(loaded[1].apiKey.isEmpty());
        QVERIFY(!RemoteEndpointStore::secretStorageAvailable());
        QVERIFY(store.keyWarning().contains(store.filePath()));
    }
};

QTEST_GUILESS_MAIN(RemoteStreamTest)
#include "ui_remotestream_test.moc"
