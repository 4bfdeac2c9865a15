// The Dutch and German translations are complete: no unfinished or empty entry, and every
// placeholder of the source string survives in the translation.
#include <QFile>
#include <QRegularExpression>
#include <QTest>
#include <QXmlStreamReader>

class TranslationsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void complete_data()
    {
        QTest::addColumn<QString>("path");
        QTest::newRow("nl") << QStringLiteral(EXL_TRANSLATIONS_DIR "/exl-studio_nl.ts");
        QTest::newRow("de") << QStringLiteral(EXL_TRANSLATIONS_DIR "/exl-studio_de.ts");
    }

    void complete()
    {
        QFETCH(QString, path);
        QFile file(path);
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
        QXmlStreamReader xml(&file);
        static const QRegularExpression placeholder(QStringLiteral("%(\\d|n)"));
        int messages = 0;
        QString source;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            if (xml.name() == QLatin1String("source")) {
                source = xml.readElementText();
            } else if (xml.name() == QLatin1String("translation")) {
                ++messages;
                const QString type = xml.attributes().value(QLatin1String("type")).toString();
                QVERIFY2(type != QLatin1String("unfinished") && type != QLatin1String("obsolete"),
                         qPrintable(QStringLiteral("%1: %2 is %3").arg(path, source, type)));
                const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
                QVERIFY2(!text.trimmed().isEmpty(), qPrintable(QStringLiteral("%1: %2 is empty").arg(path, source)));
                for (auto it = placeholder.globalMatch(source); it.hasNext();) {
                    const QString p = it.next().captured();
                    QVERIFY2(text.contains(p), qPrintable(QStringLiteral("%1: %2 lost %3").arg(path, source, p)));
                }
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(messages > 100);
    }
};

QTEST_GUILESS_MAIN(TranslationsTest)
#include "ui_translations_test.moc"
