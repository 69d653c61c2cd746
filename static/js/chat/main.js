// Starts the chat page once its parts are in place: the conversation, then the memory panel, then the feed.
(function (chat) {
  "use strict";
  if (!chat) return;
  // The memory panel drawn may move the page: the conversation is shown at its end again.
  chat.loadHistory().then(chat.refresh).then(chat.scrollToEnd).then(chat.openFeed).catch((error) => {
    chat.showError(error.message);
  });
})(window.ChatPage);
