# 每个页面的框架：品牌、导航、登录信息、提示横幅。
app-error-toast = 请求失败，请刷新页面后重试。
app-degraded = 降级运行：Redis 无响应，本实例暂时只用数据库处理所有请求。数据不会丢失；Redis 恢复后会自动切回。
nav-main = 主导航
nav-dashboard = 概览
nav-sellable = 为何不可售
nav-orders = 订单
nav-counter = 核销台
nav-products = 商品
nav-stock = 库存
nav-people = 人员
nav-places = 门店与仓库
nav-schedule = 排班
nav-reconcile = 对账
nav-codes = 券码
nav-api-keys = API 密钥
nav-webhooks = Webhook
nav-audit = 操作日志
who-all-merchants = 全部商户
role-operator = 平台运营
role-merchant-admin = 商户管理员
role-store-staff = 门店员工
sign-out = 退出登录
lang-switch = 语言

# 登录。
login-title = 登录
login-email = 邮箱
login-password = 密码
login-submit = 登录

# 错误页。
error-title = { $status ->
    [400] 请求有误
    [401] 未登录
    [403] 无权访问
    [404] 页面不存在
    [405] 不支持的操作
    [409] 冲突
    [413] 内容过大
    [415] 不支持的格式
    [422] 无法处理
    [429] 请求过于频繁
    [503] 服务暂不可用
   *[other] 出错了
}
error-back = 返回概览
error-back-public = 返回预约页

# 公开预约页。
public-book-online = 在线预约
public-book-at = 预约 { $store }
public-nothing-bookable = 目前暂无可在线预约的项目，请致电门店。
public-services = 服务项目
public-days = 日期
public-no-times = 当天已无可约时段，请选择其他日期。
public-places-left = { $n ->
   *[other] 剩余 { $n } 个名额
}
public-full = 已约满
public-not-available = 暂不可约
public-not-available-note = 暂不可约：{ $note }
public-all-times = ← 全部时段
public-with = 服务人员：{ $staff }
public-nearest = 最近的可约时段
public-no-other-times = 目前没有其他可约时段。
public-your-name = 您的姓名
public-phone = 手机号
public-book-submit = 预约这个时段
public-booking-title = 预约 { $reference }
public-booking = 预约
public-booking-status-label = 状态
public-booking-status = { $status ->
    [BOOKED] 已预约
    [CANCELLED] 已取消
    [ATTENDED] 已到店
   *[other] 爽约
}
public-address = 地址
public-store-phone = 电话
public-call-store = 如需更多预约，请致电门店：
public-price = 价格
public-free = 免费
public-date-time-sep = {" "}
public-lasting = （{ $duration }）
public-what = 项目
public-when = 时间
public-with-label = 服务人员
public-name = 姓名
public-party-size = 人数
public-party-option = { $n } 人
public-places = 人数
public-add-to-calendar = 添加到日历（.ics）
public-change-until = { $date } { $time } 前可在此改期或取消。
public-reschedule-link = 改期
public-reschedule-title = 为预约 { $reference } 改期
public-reschedule-explain = 选择其他时间：系统会先为您占好新名额，再释放原名额，预约号不变。
public-reschedule-here = 改到此时间
public-reschedule-keep = 保持原预约
public-wait-title = 候补名单
public-wait-explain = 此时段已约满。留下姓名和电话：有名额释放时，系统会按加入顺序自动为您预约。
public-wait-submit = 加入候补
public-wait-position = 您是候补名单中的第 { $n } 位。
public-wait-keep = 请保存本页：名额释放并为您预约后，预约信息会显示在这里。
public-wait-explain-hold = 此时段已约满。留下姓名和电话：有名额释放时，名额会按加入顺序给排在最前的顾客，并保留 { $minutes } 分钟等待其接受。
public-wait-keep-hold = 请保存本页：名额为您释放后，会在这里为您保留 { $minutes } 分钟，等待您接受。
public-wait-check = 立即刷新
public-wait-leave = 退出候补
public-wait-leave-yes = 确定退出候补
public-wait-leave-keep = 不，继续候补
public-wait-booked = 有名额释放，已为您预约成功。
public-wait-expired = 时段已开始，未能等到空位，抱歉。
public-wait-left = 您已不在候补名单中。
public-wait-other-times = 查看其他时间
public-wait-offered = 有名额为您释放，保留至 { $time }：接受即可完成预约。
public-wait-accept = 接受名额
public-wait-decline = 我不需要了
public-wait-decline-question = 确定放弃名额吗？名额将顺延给下一位候补顾客。
public-wait-decline-yes = 确定放弃
public-wait-decline-keep = 不，保留
public-wait-declined = 您已放弃该名额，感谢告知。
public-wait-withdrawn = 门店已撤回为您保留的名额，抱歉，请选择其他时间。
public-wait-offer-lapsed = 曾为您保留名额，但接受时间已过。
public-where = 门店
public-keep-reference = 请保存预约号，凭它可再次查看本预约。
public-cancel-link = 取消预约
public-cancel-title = 取消 { $reference }
public-cancel-question = 确定取消预约 { $reference } 吗？
public-cancel-what = { $service }，{ $date } { $time }。取消后名额将释放给其他顾客。
public-cancel-yes = 确定取消
public-cancel-keep = 保留预约

# 月视图的星期表头（issue 19）：周一开始。
public-weekday-initial = { $day ->
    [MON] 一
    [TUE] 二
    [WED] 三
    [THU] 四
    [FRI] 五
    [SAT] 六
   *[SUN] 日
}
sell-back = { $n ->
    [0] 返回“为何不可售”：所有 SKU 都已可售
   *[other] 返回“为何不可售”：还有 { $n } 个 SKU 不可售
}
# Brackets around an aside: full-width in Chinese.
paren = （{ $x }）
