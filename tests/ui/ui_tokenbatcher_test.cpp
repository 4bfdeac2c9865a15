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

    void draftTextRangesFollowTheBatch()
    {
        TokenBatcher batcher(60);
        QVERIFY(batcher.push(QStringLiteral("Hi"), 0).has_value());  // the first goes out at once
        // Three steps within one interval: two drafts accepted then a token; a token alone; one
        // draft whose text runs on from the previous step's (merged into one range); and the text
        // held back at the end (no token).
        QVERIFY(!batcher.push(QStringLiteral(" there you"), 1, 3, 2, 6).has_value());
        QVERIFY(!batcher.push(QStringLiteral(" go"), 2, 1, 0, 0).has_value());
        QVERIFY(!batcher.push(QStringLiteral("!!"), 3, 2, 1, 1).has_value());
        QVERIFY(!batcher.push(QStringLiteral("?"), 4, 0, 0, 0).has_value());
        const auto batch = batcher.flush(5);
        QVERIFY(batch.has_value());
        QCOMPARE(batch->text, QStringLiteral(" there you go!!?"));
        QCOMPARE(batch->tokenCount, 6);
        QCOMPARE(batch->acceptedDraftTokens, 3);
        QCOMPARE(batch->draftRanges, (QList<TextRange>{{0, 6}, {13, 1}}));
        QCOMPARE(batch->text.mid(0, 6), QStringLiteral(" there"));
        // A draft range continuing the last one merges; a length past the piece is clamped.
        QVERIFY(!batcher.push(QStringLiteral("ab"), 6, 1, 1, 2).has_value());
        QVERIFY(!batcher.push(QStringLiteral("cd"), 7, 1, 1, 9).has_value());
        QCOMPARE(batcher.flush(8)->draftRanges, (QList<TextRange>{{0, 4}}));
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
