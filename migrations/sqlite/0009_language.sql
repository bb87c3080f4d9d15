-- The interface's language (issue 16): a BCP 47 tag, 'zh-CN' or 'en'. A merchant's is the default of
-- its people's accounts; a store's is what anonymous customers on its booking page see unless their
-- browser or ?lang= asks otherwise; a user's own choice (NULL: the merchant's) wins for that user.
ALTER TABLE merchants ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
ALTER TABLE stores ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
ALTER TABLE users ADD COLUMN language TEXT;
-- Merchants and stores in mainland China read Chinese.
UPDATE merchants SET language = 'zh-CN' WHERE timezone IN ('Asia/Shanghai', 'Asia/Chongqing', 'Asia/Harbin', 'Asia/Urumqi', 'PRC');
UPDATE stores SET language = 'zh-CN' WHERE country = 'CN';
