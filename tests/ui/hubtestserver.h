// tests/hub/hub_server.py (the Hub-protocol test server proved against huggingface_hub) run for a UI
// test: started on 127.0.0.1 with the fixture models, its test controls (/_test/fault, /_test/log,
// /_test/reset) called synchronously, stopped with the test.
#pragma once
#include <QByteArray>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QString>
#include <QTimer>

class HubTestServer
{
public:
    ~HubTestServer()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    // Starts the server; false with `error` set when it does not come up within 20 s.
    bool start(const QString &python, const QString &script, const QString &fixtures, QString *error)
    {
        m_process.setProgram(python);
        m_process.setArguments({script, QStringLiteral("--fixtures"), fixtures, QStringLiteral("--max-seconds"),
                                QStringLiteral("600")});
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.start();
        if (!m_process.waitForStarted(10000)) {
            *error = QStringLiteral("cannot start %1: %2").arg(python, m_process.errorString());
            return false;
        }
        for (int i = 0; i < 200 && !m_process.canReadLine(); ++i)
            m_process.waitForReadyRead(100);
        const QJsonObject ports = QJsonDocument::fromJson(m_process.readLine()).object();
        m_port = ports.value(QLatin1String("hub")).toInt();
        if (m_port == 0) {
            *error = QStringLiteral("hub_server.py printed no port: %1").arg(QString::fromLocal8Bit(m_process.readAllStandardError()));
            return false;
        }
        return true;
    }

    QString endpoint() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }

    // GET of a test control or API path ("/_test/log"); the answer's body.
    QByteArray get(const QString &path)
    {
        QNetworkAccessManager manager;
        QNetworkReply *reply = manager.get(QNetworkRequest(QUrl(endpoint() + path)));
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        QTimer::singleShot(10000, &loop, &QEventLoop::quit);
        loop.exec();
        const QByteArray body = reply->readAll();
        delete reply;
        return body;
    }

private:
    QProcess m_process;
    int m_port = 0;
};
