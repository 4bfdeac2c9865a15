// TokenBatcher: a fast engine reaches the GUI at most ~60 times a second, nothing is lost,
// and a slow engine's tokens are not held back.
#include <QTest>

#include "services/tokenbatcher.h"

class TokenBatcherTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fastStreamIsRateLimited()
    {
        TokenBatcher batcher(60);
        QString expected;
        QString received;
        QList<qint64> flushTimes;
        int tokens = 0;
        // 2000 tokens/s for 2 simulated seconds: a token every half millisecond.
        for (int i = 0; i < 4000; ++i) {
            const QString piece = QStringLiteral(" t%1").arg(i);
            expected += piece;
            const qint64 now = i / 2;
            if (auto batch = batcher.push(piece, now)) {
                received += batch->text;
                tokens += batch->tokenCount;
                flushTimes.append(now);
            }
        }
        if (auto rest = batcher.flush(2000)) {
            received += rest->text;
            tokens += rest->tokenCount;
        }
        QCOMPARE(received, expected);
        QCOMPARE(tokens, 4000);
        for (int i = 1; i < flushTimes.size(); ++i)
            QVERIFY2(flushTimes[i] - flushTimes[i - 1] >= batcher.intervalMs(), "two batches closer than 1/60 s");
        QVERIFY(flushTimes.size() <= 2000 / batcher.intervalMs() + 1);
        QVERIFY(flushTimes.size() >= 2000 / batcher.intervalMs() - 1);
    }

    void slowStreamIsNotHeldBack()
    {
        TokenBatcher batcher(60);
        // 20 tokens/s: every token is due on arrival.
        for (int i = 0; i < 10; ++i) {
            const auto batch = batcher.push(QStringLiteral("x"), i * 50);
            QVERIFY(batch.has_value());
            QCOMPARE(batch->tokenCount, 1);
        }
        QVERIFY(!batcher.flush(1000).has_value());
    }

    void resetDropsPending()
    {
        TokenBatcher batcher(60);
        QVERIFY(batcher.push(QStringLiteral("a"), 0).has_value());
        QVERIFY(!batcher.push(QStringLiteral("b"), 1).has_value());
        batcher.reset();
        QVERIFY(!batcher.flush(2).has_value());
        // After a reset the next token goes out at once.
        QVERIFY(batcher.push(QStringLiteral("c"), 3).has_value());
    }
};

QTEST_GUILESS_MAIN(TokenBatcherTest)
#include "ui_tokenbatcher_test.moc"
