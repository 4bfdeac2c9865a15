// The chat as a user drives it, through the real Main.qml (offscreen) on the simulated engine:
// type and send with Enter, stop with the button, regenerate, step between the two replies with
// ‹ ›, edit a message (Ctrl+Enter), export the chat through the export menu and its file dialog,
// then start the app again on the same data folder and find the chat reopened on the branch
// that was shown; leaving a chat mid-reply asks first. Keys and clicks go to the window; what is checked is what the items show.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>

#include "app/appcontext.h"
#include "app/studio.h"
#include "services/combinedinferenceservice.h"
#include "services/fakeinferenceservice.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

namespace {
QStringList g_warnings;

void collectWarnings(QtMsgType type, const QMessageLogContext &, const QString &message)
{
    if (type != QtDebugMsg && type != QtInfoMsg)
        g_warnings.append(message);
}

// Visible items named `name` under `root`, in tree order (rows of the message list top down);
// "=Text": buttons that read Text.
void collect(QQuickItem *root, const QString &name, QList<QQuickItem *> &out)
{
    if (!root->isVisible())
        return;
    if (root->objectName() == name || (name.startsWith(u'=') && root->inherits("QQuickAbstractButton")
                                       && root->property("text").toString() == name.mid(1)))
        out.append(root);
    for (QQuickItem *child : root->childItems())
        collect(child, name, out);
}
}  // namespace

class ChatFlowTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<AppContext> m_context;
    std::unique_ptr<QQmlApplicationEngine> m_engine;

    QQuickWindow *window() const
    {
        return m_engine->rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(m_engine->rootObjects().constFirst());
    }

    // `repeats`: copies of the scripted reply (a longer reply for more time to act mid-reply).
    void start(int repeats = 1)
    {
        AppOptions options;
        options.dataDir = m_dir.path();
        constexpr qint64 kGiB = 1024LL * 1024 * 1024;
        // Slow enough to stop mid-reply: 200 tokens/s.
        m_context = std::make_unique<AppContext>(
            options,
            std::make_unique<CombinedInferenceService>(
                std::make_unique<FakeInferenceService>(QStringLiteral("cuda:0"), FakeTiming{0, 200.0, 1, 0, repeats}),
                std::make_unique<RemoteInferenceService>()),
            std::make_unique<FakeVramPlanner>(24 * kGiB, 936e9), true);
        m_engine = std::make_unique<QQmlApplicationEngine>();
        QVERIFY(loadMainWindow(*m_engine, *m_context));
        QVERIFY(QTest::qWaitForWindowExposed(window()));
    }

    void stop()
    {
        m_engine.reset();
        m_context.reset();
    }

    QList<QQuickItem *> items(const QString &name) const
    {
        // From the window's root: the pages, and the popups and dialogs on its overlay.
        QQuickItem *root = window()->contentItem();
        while (root->parentItem())
            root = root->parentItem();
        QList<QQuickItem *> out;
        collect(root, name, out);
        return out;
    }
    QQuickItem *item(const QString &name) const
    {
        const QList<QQuickItem *> all = items(name);
        return all.isEmpty() ? nullptr : all.constFirst();
    }
    // Clicks the middle of `target` once the layouts have settled.
    void click(QQuickItem *target)
    {
        QVERIFY(target);
        QTest::qWait(30);
        QVERIFY2(target->isEnabled(), qPrintable(target->objectName()));
        const QPointF at = target->mapToScene(QPointF(target->width() / 2, target->height() / 2));
        QTest::mouseClick(window(), Qt::LeftButton, {}, at.toPoint());
    }
    // Types `text` into the item with the focus (QTest::keyClicks takes widgets only).
    void typeText(const QString &text)
    {
        for (const QChar c : text)
            QTest::keyClick(window(), c.toLatin1());
    }
    QString messageText(int row) const { return m_context->chat()->messageText(row); }
    QString branchLabel(int which) const
    {
        const QList<QQuickItem *> labels = items(QStringLiteral("branchLabel"));
        return which < labels.size() ? labels.at(which)->property("text").toString() : QString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QQuickStyle::setStyle(QStringLiteral("Material"));
        qInstallMessageHandler(collectWarnings);
    }

    void chatStopRegenerateBranchesEditExportRestart()
    {
        start();
        ChatViewModel *chat = m_context->chat();
        QSignalSpy finished(chat, &ChatViewModel::replyFinished);

        // No model yet: Enter sends nothing, the box says why.
        QQuickItem *field = item(QStringLiteral("messageField"));
        QVERIFY(field);
        QTRY_VERIFY(field->hasActiveFocus());  // ready to type at start
        QVERIFY(field->property("placeholderText").toString().contains(QStringLiteral("Load a model")));
        typeText(QStringLiteral("Hello"));
        QTest::keyClick(window(), Qt::Key_Return);
        QCOMPARE(chat->rowCount(), 0);
        QCOMPARE(field->property("text").toString(), QStringLiteral("Hello"));
        QVERIFY(!item(QStringLiteral("sendButton"))->isEnabled());

        QSignalSpy loaded(m_context->models(), &ModelManager::loadedModelChanged);
        m_context->models()->load();
        QVERIFY(loaded.wait(10000));
        QTRY_VERIFY(item(QStringLiteral("sendButton"))->isEnabled());

        // Send with Enter; stop with the button once some text has come.
        typeText(QStringLiteral(" there"));
        QTest::keyClick(window(), Qt::Key_Return);
        QCOMPARE(chat->rowCount(), 2);
        QCOMPARE(messageText(0), QStringLiteral("Hello there"));
        QCOMPARE(field->property("text").toString(), QString());
        QTRY_VERIFY(messageText(1).size() > 10);
        click(item(QStringLiteral("sendButton")));  // Stop
        QTRY_VERIFY(!chat->busy());
        const QString first = messageText(1);
        QVERIFY(chat->data(chat->index(1), ChatViewModel::StoppedRole).toBool());

        // Regenerate: a second reply, ‹ 2/2 ›.
        click(item(QStringLiteral("regenerateButton")));
        QVERIFY(chat->busy());
        QVERIFY(finished.wait(20000));
        const QString second = messageText(1);
        QVERIFY(second != first);
        QTRY_COMPARE(branchLabel(0), QStringLiteral("2/2"));
        click(item(QStringLiteral("previousBranch")));
        QTRY_COMPARE(messageText(1), first);
        QTRY_COMPARE(branchLabel(0), QStringLiteral("1/2"));
        click(item(QStringLiteral("nextBranch")));
        QTRY_COMPARE(messageText(1), second);

        // Edit the question: Ctrl+Enter sends it; the first question stays as branch 1/2.
        click(item(QStringLiteral("editButton")));
        QQuickItem *editor = item(QStringLiteral("editor"));
        QVERIFY(editor);
        QTRY_VERIFY(editor->hasActiveFocus());
        typeText(QStringLiteral(", again"));
        QTest::keyClick(window(), Qt::Key_Return, Qt::ControlModifier);
        QCOMPARE(messageText(0), QStringLiteral("Hello there, again"));
        QVERIFY(finished.wait(20000));
        QTRY_COMPARE(branchLabel(0), QStringLiteral("2/2"));
        QCOMPARE(chat->rowCount(), 2);

        // Back to the first question: its branch comes back whole, on the reply chosen there.
        click(item(QStringLiteral("previousBranch")));
        QTRY_COMPARE(messageText(0), QStringLiteral("Hello there"));
        QCOMPARE(messageText(1), second);

        // Export as JSON through the menu and the file dialog.
        click(item(QStringLiteral("exportButton")));
        QObject *menuItem = nullptr;
        QTRY_VERIFY((menuItem = window()->findChild<QObject *>(QStringLiteral("exportJson"))) != nullptr
                    && qobject_cast<QQuickItem *>(menuItem)->isVisible());
        click(qobject_cast<QQuickItem *>(menuItem));
        QObject *dialog = window()->findChild<QObject *>(QStringLiteral("exportDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("visible").toBool());
        const QString path = m_dir.filePath(QStringLiteral("exported.json"));
        QVERIFY(dialog->setProperty("currentFolder", QUrl::fromLocalFile(m_dir.path())));
        // The dialog's own file name field: the name typed and taken with Enter, then Export.
        QQuickItem *name = nullptr;
        QTRY_VERIFY((name = item(QStringLiteral("fileNameTextField"))) != nullptr);
        click(name);
        QTRY_VERIFY(name->hasActiveFocus());
        QTest::keyClick(window(), Qt::Key_A, Qt::ControlModifier);
        typeText(QStringLiteral("exported.json"));
        QTest::keyClick(window(), Qt::Key_Return);
        click(item(QStringLiteral("=Export")));  // the dialog's accept button
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QTRY_VERIFY2(QFile::exists(path), qPrintable(chat->lastError()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray messages = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("messages")).toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages.at(0).toObject().value(QStringLiteral("content")).toString(), QStringLiteral("Hello there"));
        QCOMPARE(messages.at(1).toObject().value(QStringLiteral("content")).toString(), second);

        // Ctrl+N: a new chat, the focus in the input.
        const qint64 id = chat->conversationId();
        // Shortcuts stay blocked until the closed dialog's exit transition has finished and its
        // modal overlay is gone (under load that takes a while): press until the new chat opens.
        for (int tries = 0; tries < 50 && chat->conversationId() != 0; ++tries) {
            QTest::keyClick(window(), Qt::Key_N, Qt::ControlModifier);
            QTest::qWaitFor([&] { return chat->conversationId() == 0; }, 200);
        }
        QCOMPARE(chat->conversationId(), 0);
        QTRY_VERIFY(item(QStringLiteral("messageField"))->hasActiveFocus());
        // Back to the chat through the side bar: its row, Enter.
        m_context->chat()->openConversation(id);
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));

        // A new app on the same data: the chat is open again, on the branch shown.
        stop();
        start(50);
        chat = m_context->chat();
        QCOMPARE(chat->conversationId(), id);
        QCOMPARE(chat->rowCount(), 2);
        QCOMPARE(messageText(0), QStringLiteral("Hello there"));
        QCOMPARE(messageText(1), second);
        QTRY_COMPARE(branchLabel(0), QStringLiteral("1/2"));  // the question's versions
        QCOMPARE(branchLabel(1), QStringLiteral("2/2"));      // the reply's

        // Leaving a chat while its reply is written asks first: "Keep writing" stays, "Stop and
        // open" stops the reply (kept as far as it came) and opens the other chat.
        QSignalSpy reloaded(m_context->models(), &ModelManager::loadedModelChanged);
        m_context->models()->load();
        QVERIFY(reloaded.wait(10000));
        QTRY_VERIFY(item(QStringLiteral("messageField"))->hasActiveFocus());
        typeText(QStringLiteral("More"));
        QTest::keyClick(window(), Qt::Key_Return);
        QVERIFY2(chat->busy(), qPrintable(QStringLiteral("rows %1, field \"%2\", model \"%3\"").arg(chat->rowCount())
                                              .arg(item(QStringLiteral("messageField"))->property("text").toString(),
                                                   m_context->models()->loadedModelName())));
        QTRY_VERIFY(messageText(3).size() > 5);
        click(item(QStringLiteral("newChatButton")));
        QQuickItem *keep = nullptr;
        QTRY_VERIFY((keep = item(QStringLiteral("keepWriting"))) != nullptr);
        click(keep);
        QTRY_VERIFY(!item(QStringLiteral("keepWriting")));
        QVERIFY(chat->busy());
        QCOMPARE(chat->conversationId(), id);
        QTest::keyClick(window(), Qt::Key_N, Qt::ControlModifier);
        QQuickItem *stopAndOpen = nullptr;
        QTRY_VERIFY((stopAndOpen = item(QStringLiteral("stopAndSwitch"))) != nullptr);
        QTRY_VERIFY(stopAndOpen->hasActiveFocus());  // once opened
        QTest::keyClick(window(), Qt::Key_Return);  // Enter presses the focused "Stop and open"
        QTRY_COMPARE(chat->conversationId(), 0);
        QVERIFY(!chat->busy());
        chat->openConversation(id);
        QCOMPARE(chat->rowCount(), 4);
        QVERIFY(!messageText(3).isEmpty());
        QVERIFY(chat->data(chat->index(3), ChatViewModel::StoppedRole).toBool());
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
        stop();
    }

    void cleanupTestCase() { qInstallMessageHandler(nullptr); }
};

QTEST_MAIN(ChatFlowTest)
#include "ui_chatflow_test.moc"
