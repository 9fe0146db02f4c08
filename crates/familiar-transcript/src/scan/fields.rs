//! What the fields of the records mean to [`super`]: readers on the [`Cursor`] for a
//! [`Record`], its [`Message`], content [`Block`]s, token counts ([`Usage`]) and a tool call's
//! [`ToolInput`], each picking the fields serde's derive names and skipping the rest, and
//! giving up (`None`) wherever serde might decide otherwise.

use crate::record::{Block, CacheCreation, Content, Message, MessageField, Record, TextOr, Usage};
use crate::tools::ToolInput;

use super::cursor::{Cursor, Seen};

impl<'a> Cursor<'a> {
    /// `Option<Usage>`, on every API message: its token counts read here when they are plain
    /// (unsigned integers, no duplicate key), else by serde from the value's own slice.
    pub(super) fn usage_field(&mut self) -> Option<Option<Usage>> {
        let (start, depth) = (self.pos, self.depth);
        if let Some(usage) = self.plain_usage() {
            return Some(usage);
        }
        (self.pos, self.depth) = (start, depth);
        self.owned_field()
    }

    pub(super) fn plain_usage(&mut self) -> Option<Option<Usage>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut usage = Usage::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let u = &mut usage;
            match key {
                "input_tokens" => (seen.first(0)?, u.input_tokens = cursor.count()?),
                "output_tokens" => (seen.first(1)?, u.output_tokens = cursor.count()?),
                "cache_read_input_tokens" => {
                    (seen.first(2)?, u.cache_read_input_tokens = cursor.count()?)
                }
                "cache_creation_input_tokens" => (
                    seen.first(3)?,
                    u.cache_creation_input_tokens = cursor.count()?,
                ),
                "cache_creation" => (seen.first(4)?, u.cache_creation = cursor.cache_creation()?),
                _ => (cursor.value().map(drop)?, ()),
            };
            Some(())
        })?;
        Some(Some(usage))
    }

    pub(super) fn cache_creation(&mut self) -> Option<Option<CacheCreation>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut cache = CacheCreation::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let c = &mut cache;
            match key {
                "ephemeral_5m_input_tokens" => (
                    seen.first(0)?,
                    c.ephemeral_5m_input_tokens = cursor.count()?,
                ),
                "ephemeral_1h_input_tokens" => (
                    seen.first(1)?,
                    c.ephemeral_1h_input_tokens = cursor.count()?,
                ),
                _ => (cursor.value().map(drop)?, ()),
            };
            Some(())
        })?;
        Some(Some(cache))
    }

    pub(super) fn record(&mut self, record: &mut Record<'a>) -> Option<()> {
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let r = &mut *record;
            match key {
                "type" => (seen.first(0)?, r.kind = cursor.str_field()?),
                "subtype" => (seen.first(1)?, r.subtype = cursor.str_field()?),
                "sessionId" => (seen.first(2)?, r.session_id = cursor.str_field()?),
                "session_id" => (seen.first(3)?, r.session_id_snake = cursor.str_field()?),
                "agentId" => (seen.first(4)?, r.agent_id = cursor.str_field()?),
                "parent_tool_use_id" => {
                    (seen.first(5)?, r.parent_tool_use_id = cursor.str_field()?)
                }
                "isSidechain" => (seen.first(6)?, r.is_sidechain = cursor.owned_field()?),
                "isMeta" => (seen.first(7)?, r.is_meta = cursor.owned_field()?),
                "isCompactSummary" => {
                    (seen.first(8)?, r.is_compact_summary = cursor.owned_field()?)
                }
                "isApiErrorMessage" => (
                    seen.first(9)?,
                    r.is_api_error_message = cursor.owned_field()?,
                ),
                "timestamp" => (seen.first(10)?, r.timestamp = cursor.str_field()?),
                "entrypoint" => (seen.first(11)?, r.entrypoint = cursor.str_field()?),
                "payload" => (seen.first(12)?, r.payload = cursor.raw_field()?),
                "message" => (seen.first(13)?, r.message = cursor.message_field()?),
                "error" => (seen.first(14)?, r.error = cursor.raw_field()?),
                "cause" => (seen.first(15)?, r.cause = cursor.raw_field()?),
                "retryInMs" => (seen.first(16)?, r.retry_in_ms = cursor.owned_field()?),
                "retryAttempt" => (seen.first(17)?, r.retry_attempt = cursor.owned_field()?),
                "maxRetries" => (seen.first(18)?, r.max_retries = cursor.owned_field()?),
                "attempt" => (seen.first(19)?, r.attempt = cursor.owned_field()?),
                "max_retries" => (seen.first(20)?, r.max_retries_snake = cursor.owned_field()?),
                "retry_delay_ms" => (seen.first(21)?, r.retry_delay_ms = cursor.owned_field()?),
                "error_status" => (seen.first(22)?, r.error_status = cursor.owned_field()?),
                "api_error_status" => (seen.first(23)?, r.api_error_status = cursor.owned_field()?),
                "compactMetadata" => (seen.first(24)?, r.compact_metadata = cursor.serde_field()?),
                "durationMs" => (seen.first(25)?, r.duration_ms_camel = cursor.owned_field()?),
                "content" => (seen.first(26)?, r.content = cursor.raw_field()?),
                "summary" => (seen.first(27)?, r.summary = cursor.str_field()?),
                "toolUseResult" => (seen.first(28)?, r.tool_use_result = cursor.raw_field()?),
                "is_error" => (seen.first(29)?, r.is_error = cursor.owned_field()?),
                "duration_ms" => (seen.first(30)?, r.duration_ms = cursor.owned_field()?),
                "num_turns" => (seen.first(31)?, r.num_turns = cursor.owned_field()?),
                "total_cost_usd" => (seen.first(32)?, r.total_cost_usd = cursor.owned_field()?),
                "result" => (seen.first(33)?, r.result = cursor.raw_field()?),
                "errors" => (seen.first(34)?, r.errors = cursor.raw_field()?),
                "usage" => (seen.first(35)?, r.usage = cursor.usage_field()?),
                "model" => (seen.first(36)?, r.model = cursor.str_field()?),
                "name" => (seen.first(37)?, r.name = cursor.str_field()?),
                "input" => (seen.first(38)?, r.input = cursor.raw_field()?),
                "tool_use_id" => (seen.first(39)?, r.tool_use_id = cursor.str_field()?),
                "id" => (seen.first(40)?, r.id = cursor.str_field()?),
                "requestId" => (seen.first(41)?, r.request_id = cursor.str_field()?),
                "data" => (seen.first(42)?, r.data = cursor.raw_field()?),
                "attachment" => (seen.first(43)?, r.attachment = cursor.raw_field()?),
                "params" => (seen.first(44)?, r.params = cursor.raw_field()?),
                "permissionDecision" => {
                    (seen.first(45)?, r.permission_decision = cursor.raw_field()?)
                }
                "totalCostUSD" => (
                    seen.first(46)?,
                    r.total_cost_usd_camel = cursor.owned_field()?,
                ),
                "version" => (seen.first(47)?, r.version = cursor.str_field()?),
                "usageMetadata" => (seen.first(48)?, r.usage_metadata = cursor.raw_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })
    }

    /// `message`: an object read here; a string or an odd shape read by serde.
    pub(super) fn message_field(&mut self) -> Option<Option<MessageField<'a>>> {
        match self.peek()? {
            b'{' => {}
            // Decoded in one allocation of at most its length (serde's string grows by
            // doubling: a prompt of 50 MB held 76 MB while it was read).
            b'"' => return self.string_value().map(|text| Some(TextOr::Text(text))),
            _ => return self.serde_field(),
        }
        let mut message = Message::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let m = &mut message;
            match key {
                "id" => (seen.first(0)?, m.id = cursor.str_field()?),
                "model" => (seen.first(1)?, m.model = cursor.str_field()?),
                "content" => (seen.first(2)?, m.content = cursor.content_field()?),
                "stop_reason" => (seen.first(3)?, m.stop_reason = cursor.str_field()?),
                "usage" => (seen.first(4)?, m.usage = cursor.usage_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })?;
        Some(Some(TextOr::Value(message)))
    }

    /// `message.content`: an array of blocks or a string read here; an odd shape by serde.
    pub(super) fn content_field(&mut self) -> Option<Option<Content<'a>>> {
        match self.peek()? {
            b'[' => {}
            b'"' => return self.string_value().map(|text| Some(TextOr::Text(text))),
            _ => return self.serde_field(),
        }
        let mut blocks = Vec::new();
        self.items(b'[', b']', |cursor| {
            blocks.push(if cursor.peek()? == b'{' {
                cursor.block()?
            } else {
                cursor.serde_field()?
            });
            Some(())
        })?;
        Some(Some(TextOr::Value(blocks)))
    }

    pub(super) fn block(&mut self) -> Option<Block<'a>> {
        let mut block = Block::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let b = &mut block;
            match key {
                "type" => (seen.first(0)?, b.kind = cursor.str_field()?),
                "text" => (seen.first(1)?, b.text = cursor.str_field()?),
                "thinking" => (seen.first(2)?, b.thinking = cursor.str_field()?),
                "id" => (seen.first(3)?, b.id = cursor.str_field()?),
                "name" => (seen.first(4)?, b.name = cursor.str_field()?),
                "input" => (seen.first(5)?, b.input = cursor.raw_field()?),
                "tool_use_id" => (seen.first(6)?, b.tool_use_id = cursor.str_field()?),
                "content" => (seen.first(7)?, b.content = cursor.raw_field()?),
                "is_error" => (seen.first(8)?, b.is_error = cursor.owned_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })?;
        Some(block)
    }

    /// A tool call's `input` object: the fields [`ToolInput`] names.
    pub(super) fn tool_input(&mut self) -> Option<ToolInput<'a>> {
        let mut input = ToolInput::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let i = &mut input;
            match key {
                "file_path" => (seen.first(0)?, i.file_path = cursor.str_field()?),
                "notebook_path" => (seen.first(1)?, i.notebook_path = cursor.str_field()?),
                "path" => (seen.first(2)?, i.path = cursor.str_field()?),
                "pattern" => (seen.first(3)?, i.pattern = cursor.str_field()?),
                "command" => (seen.first(4)?, i.command = cursor.str_field()?),
                "url" => (seen.first(5)?, i.url = cursor.str_field()?),
                "query" => (seen.first(6)?, i.query = cursor.str_field()?),
                "bash_id" => (seen.first(7)?, i.bash_id = cursor.str_field()?),
                "shell_id" => (seen.first(8)?, i.shell_id = cursor.str_field()?),
                "description" => (seen.first(9)?, i.description = cursor.str_field()?),
                "subagent_type" => (seen.first(10)?, i.subagent_type = cursor.str_field()?),
                "skill" => (seen.first(11)?, i.skill = cursor.str_field()?),
                "subject" => (seen.first(12)?, i.subject = cursor.str_field()?),
                "taskId" => (seen.first(13)?, i.task_id = cursor.str_field()?),
                _ => (cursor.value().map(drop)?, ()),
            };
            Some(())
        })?;
        Some(input)
    }
}
